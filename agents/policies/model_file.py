"""The model-file format: a policy network's tensors and the JSON sidecar that says what they are.

A model is one ``.safetensors`` file (written by ``train.py``): the policy network's tensors
plus, in the file's metadata, the JSON sidecar (network architecture and activation,
observation version and size, number of players, rules, training figures). The network's
input features (``network.features``: the observation alone, ``pairs`` or ``fits``;
agents/policies/features.py)
hold no tensors and are rebuilt from their name. A copy of the sidecar is written beside it
(same name, ``.json``) for people and tools to read; loading uses the copy inside the weights
file, so the two can never be mismatched by a crash between two writes.

Why not stable-baselines3's ``.zip``: loading one unpickles Python objects, so a crafted file
runs arbitrary code; a ``.zip`` is refused (:func:`zip_refusal`). The network is rebuilt from
the sidecar and every tensor's name, dtype and shape is checked against it before any data is
read; the header, the JSON's size and depth and every value the loader uses are bounded, so a
hostile or damaged file fails with a ``ValueError`` that says what is wrong.

What a model was trained for (the sidecar's ``rules`` and ``trained_for``) is read by
:mod:`agents.policies.trained_for`; the bounded JSON reader is
:mod:`agents.policies.bounded_json`.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

from agents.policies.bounded_json import MAX_JSON_DEPTH, json_depth, parse_json
from agents.policies.features import FEATURES, PairFeatures, extra_inputs, players_for
from agents.policies.trained_for import (  # noqa: F401 - re-exported for the model's readers
    check_trained_for,
    describe_training,
    other_rules_of_play,
    sidecar_trained_for,
    trained_for,
    training_mismatch,
)
from trash_env.files import atomic_write_bytes, safe_text
from trash_env.observation import OBS_VERSION, observation_size
from trash_env.rules import Rules

MODEL_SUFFIX = ".safetensors"
SIDECAR_FORMAT = "trash-env-policy"
METADATA_KEY = "trash_env_policy"
NUM_ACTIONS = 13
ACTIVATIONS = ("tanh", "relu")

# Bounds on what a model file may make the loader parse or allocate.
MAX_FILE_BYTES = 256 * 2**20  # 256 MiB of tensors
MAX_HEADER_BYTES = 2**20  # the safetensors JSON header, sidecar included
MAX_LAYERS = 8
MAX_WIDTH = 4096
MAX_STRING = 4096


def sidecar_path(model_path: str | Path) -> Path:
    """``model.safetensors`` -> ``model.json`` (the readable copy of the sidecar)."""
    return Path(model_path).with_suffix(".json")


# ---------------------------------------------------------------------------- the sidecar


def _check_strings(value: Any, where: str) -> None:
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise ValueError(f"{where}: a string of {len(value)} characters (at most {MAX_STRING})")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key, where)
            _check_strings(item, where)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item, where)


def _int_in(data: dict, key: str, low: int, high: int, where: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(
            f"{where}: {key} must be an integer from {low} to {high}, got {safe_text(repr(value))}"
        )
    return value


def network_tensors(network: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """The tensors (name -> shape) a policy network of this architecture holds: the names of
    stable-baselines3's ``MlpPolicy`` state dict (actor, critic and their heads). The first
    layers read the observation plus the network's ``features`` (agents/policies/features.py)."""
    hidden, value_hidden = network["hidden"], network["value_hidden"]
    inputs = network["inputs"] + extra_inputs(
        network.get("features", "obs"), players_for(network["inputs"])
    )
    shapes: dict[str, tuple[int, ...]] = {}
    for prefix, sizes in (
        ("mlp_extractor.policy_net", hidden),
        ("mlp_extractor.value_net", value_hidden),
    ):
        width = inputs
        for i, size in enumerate(sizes):
            shapes[f"{prefix}.{2 * i}.weight"] = (size, width)
            shapes[f"{prefix}.{2 * i}.bias"] = (size,)
            width = size
    last_pi = hidden[-1] if hidden else inputs
    last_vf = value_hidden[-1] if value_hidden else inputs
    shapes["action_net.weight"] = (NUM_ACTIONS, last_pi)
    shapes["action_net.bias"] = (NUM_ACTIONS,)
    shapes["value_net.weight"] = (1, last_vf)
    shapes["value_net.bias"] = (1,)
    return shapes


def check_sidecar(data: Any, where: str) -> dict[str, Any]:
    """The sidecar ``data``, every value the loader relies on range-checked (``ValueError``
    naming the field otherwise). Extra fields (training figures) are kept as they are."""
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise ValueError(
            f"{where}: not a trash-env policy sidecar (format must be {SIDECAR_FORMAT!r})"
        )
    if json_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise ValueError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    _check_strings(data, where)
    version = data.get("obs_version")
    if version != OBS_VERSION:
        raise ValueError(
            f"{where}: trained on observation version {safe_text(repr(version))}, but this "
            f"trash-env encodes version {OBS_VERSION}: retrain it with train.py"
        )
    players = _int_in(data, "num_players", 2, 6, where)
    size = data.get("observation_size")
    if size != observation_size(players):
        raise ValueError(
            f"{where}: observation_size {safe_text(repr(size))} does not match num_players "
            f"{players} under observation version {OBS_VERSION} ({observation_size(players)})"
        )
    rules = data.get("rules")
    if not isinstance(rules, dict):
        raise ValueError(f"{where}: rules must be a JSON object of rules options")
    try:
        parsed = Rules.from_options(**{str(k): v for k, v in rules.items()})
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: rules: {safe_text(error)}") from None
    if parsed.num_players != players:
        raise ValueError(
            f"{where}: rules are for {parsed.num_players} players, but num_players is {players}"
        )
    network = data.get("network")
    if not isinstance(network, dict):
        raise ValueError(
            f"{where}: network must be a JSON object (inputs, hidden, "
            "value_hidden, activation, actions)"
        )
    if network.get("inputs") != size:
        raise ValueError(
            f"{where}: network inputs {safe_text(repr(network.get('inputs')))} "
            f"differ from observation_size {size}"
        )
    if network.get("actions") != NUM_ACTIONS:
        raise ValueError(
            f"{where}: network actions must be {NUM_ACTIONS}, got "
            f"{safe_text(repr(network.get('actions')))}"
        )
    if network.get("activation") not in ACTIVATIONS:
        raise ValueError(
            f"{where}: network activation must be one of "
            f"{', '.join(ACTIVATIONS)}, got "
            f"{safe_text(repr(network.get('activation')))}"
        )
    if network.get("features", "obs") not in FEATURES:
        raise ValueError(
            f"{where}: network features must be one of {', '.join(FEATURES)}, "
            f"got {safe_text(repr(network.get('features')))}"
        )
    for key in ("hidden", "value_hidden"):
        sizes = network.get(key)
        if (
            not isinstance(sizes, list)
            or len(sizes) > MAX_LAYERS
            or any(
                isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= MAX_WIDTH
                for s in sizes
            )
        ):
            raise ValueError(
                f"{where}: network {key} must be a list of at most {MAX_LAYERS} "
                f"layer sizes from 1 to {MAX_WIDTH}, got "
                f"{safe_text(repr(sizes))[:200]}"
            )
    for key in ("timesteps", "seed"):
        if key in data and data[key] is not None:
            _int_in(data, key, 0, 2**63 - 1, where)
    check_trained_for(data, where)
    return data


def _read_header(path: Path) -> tuple[dict[str, Any], int]:
    """The safetensors header of ``path`` (bounded) and where its data starts."""
    try:
        if path.is_dir():
            raise ValueError(
                f"model file {safe_text(path)} is a directory, not a {MODEL_SUFFIX} file"
            )
        if not path.is_file():
            raise ValueError(f"model file {safe_text(path)} not found")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(
                f"model file {safe_text(path)}: {size} bytes, more than the "
                f"{MAX_FILE_BYTES} allowed"
            )
        with path.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise ValueError(f"model file {safe_text(path)} is truncated (no header)")
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER_BYTES or 8 + length > size:
                raise ValueError(
                    f"model file {safe_text(path)} is not a safetensors file or is truncated "
                    f"(header of {length} bytes in a file of {size}; at most "
                    f"{MAX_HEADER_BYTES})"
                )
            raw = handle.read(length)
    except OSError as error:
        raise ValueError(f"model file {safe_text(path)}: {safe_text(error)}") from None
    header = parse_json(raw, f"model file {safe_text(path)}: header")
    if not isinstance(header, dict):
        raise ValueError(f"model file {safe_text(path)}: the header is not a JSON object")
    return header, 8 + length


def read_sidecar(model_path: str | Path) -> dict[str, Any]:
    """The sidecar stored in a model file, checked (``ValueError`` saying what is wrong)."""
    path = Path(model_path)
    where = f"model {safe_text(path)}"
    header, _ = _read_header(path)
    metadata = header.get("__metadata__")
    if not isinstance(metadata, dict) or not isinstance(metadata.get(METADATA_KEY), str):
        raise ValueError(
            f"{where}: no trash-env sidecar in the file's metadata; models saved "
            "by train.py have one (it records what the network was trained on)"
        )
    data = parse_json(metadata[METADATA_KEY], f"{where}: sidecar")
    return check_sidecar(data, f"{where}: sidecar")


def _check_tensors(
    header: dict[str, Any], sidecar: dict[str, Any], data_start: int, file_size: int, where: str
) -> None:
    """Every tensor the sidecar's network needs, float32, with its shape; nothing else."""
    expected = network_tensors(sidecar["network"])
    found = {k: v for k, v in header.items() if k != "__metadata__"}
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing:
        raise ValueError(
            f"{where}: missing tensor(s) {', '.join(missing)} that the sidecar's network needs"
        )
    if extra:
        shown = safe_text(", ".join(extra[:5]))[:300]
        raise ValueError(
            f"{where}: {len(extra)} tensor(s) the sidecar's network does not have: {shown}"
        )
    end = 0
    for name, shape in expected.items():
        entry = found[name]
        if not isinstance(entry, dict) or entry.get("dtype") != "F32":
            dtype = entry.get("dtype") if isinstance(entry, dict) else entry
            raise ValueError(
                f"{where}: tensor {name} must be float32 (F32), got {safe_text(repr(dtype))[:50]}"
            )
        if entry.get("shape") != list(shape):
            raise ValueError(
                f"{where}: tensor {name} has shape "
                f"{safe_text(repr(entry.get('shape')))[:100]}, the sidecar's "
                f"network needs {list(shape)}"
            )
        offsets = entry.get("data_offsets")
        nbytes = 4 * math.prod(shape)
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in offsets)
            or offsets[1] - offsets[0] != nbytes
            or offsets[0] < 0
        ):
            raise ValueError(f"{where}: tensor {name} has bad data offsets")
        end = max(end, offsets[1])
    if data_start + end != file_size:
        raise ValueError(
            f"{where}: the file holds {file_size - data_start} bytes of tensor "
            f"data, the header describes {end} (truncated or padded)"
        )


def load_model(path: str | Path) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """The actor of a model file as NumPy layers, and its checked sidecar. ``ValueError``
    (never a library traceback) for a missing, corrupt, hostile or mismatched file. Cached per
    file version (path, size, modification time): the envs of one process and an evaluation
    share one copy, which they only read."""
    path = Path(path)
    try:
        stat = path.stat()
        key: tuple | None = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    loaded = _load_model(path)
    if key is not None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = loaded
    return loaded


_CACHE: dict[tuple, tuple[list[tuple[str, Any]], dict[str, Any]]] = {}
_CACHE_SIZE = 8


def load_tensors(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every tensor of a model file (checked against its sidecar) and the sidecar."""
    path = Path(path)
    where = f"model {safe_text(path)}"
    if path.suffix == ".zip":
        raise ValueError(zip_refusal(path))
    header, start = _read_header(path)
    sidecar = read_sidecar(path)
    _check_tensors(header, sidecar, start, path.stat().st_size, where)
    try:
        from safetensors.numpy import load
    except ImportError as error:
        raise ValueError(
            f"loading {where} needs the safetensors package (pip install safetensors): {error}"
        ) from None
    try:
        tensors = load(path.read_bytes())
    except Exception as error:  # the library's own SafetensorError and friends
        raise ValueError(
            f"{where}: not a readable safetensors file ({type(error).__name__}: {safe_text(error)})"
        ) from None
    for name, array in tensors.items():
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{where}: tensor {name} holds NaN or infinite values")
    return tensors, sidecar


def _load_model(path: Path) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    tensors, sidecar = load_tensors(path)
    network = sidecar["network"]
    activation = network["activation"]
    layers: list[tuple[str, Any]] = []
    features = network.get("features", "obs")
    if features != "obs":
        layers.append(("features", PairFeatures(int(sidecar["num_players"]), features == "fits")))
    for i in range(len(network["hidden"])):
        prefix = f"mlp_extractor.policy_net.{2 * i}"
        layers.append(
            (
                "linear",
                (
                    np.ascontiguousarray(tensors[prefix + ".weight"].T),
                    tensors[prefix + ".bias"].copy(),
                ),
            )
        )
        layers.append((activation, None))
    layers.append(
        (
            "linear",
            (
                np.ascontiguousarray(tensors["action_net.weight"].T),
                tensors["action_net.bias"].copy(),
            ),
        )
    )
    return layers, sidecar


def zip_refusal(path: str | Path) -> str:
    """Why a ``.zip`` model is refused, and what to do instead."""
    return (
        f"model {safe_text(path)}: .zip models are not loaded: a stable-baselines3 .zip is "
        "unpickled when loaded, so a crafted file runs code on this machine. trash-env "
        f"loads policies from {MODEL_SUFFIX} files (tensors and JSON only; train.py writes "
        "them). To convert a .zip you trained yourself: python -m agents.policies.convert "
        "MODEL.zip MODEL.safetensors --trust-pickle"
    )


# ---------------------------------------------------------------------------- writing


def write_policy(
    path: str | Path, tensors: dict[str, np.ndarray], network: dict[str, Any], info: dict[str, Any]
) -> Path:
    """Write a model file (tensors + sidecar in its metadata) and the readable ``.json`` copy,
    each atomically (temp file + rename): a crash leaves the old file or the new one."""
    path = Path(path)
    if path.suffix != MODEL_SUFFIX:
        raise ValueError(f"model path {safe_text(path)} must end in {MODEL_SUFFIX}")
    players = int(info["num_players"])
    sidecar = {
        **info,
        "format": SIDECAR_FORMAT,
        "obs_version": OBS_VERSION,
        "observation_size": observation_size(players),
        "network": network,
    }
    check_sidecar(json.loads(json.dumps(sidecar)), f"model {safe_text(path)}: sidecar")
    _check_tensors_before_writing(tensors, network)
    from safetensors.numpy import save

    text = json.dumps(sidecar, indent=2, sort_keys=True) + "\n"
    blob = save(
        {k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()},
        metadata={METADATA_KEY: text},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, blob)
    atomic_write_bytes(sidecar_path(path), text.encode())
    return path


def _check_tensors_before_writing(tensors: dict[str, np.ndarray], network: dict[str, Any]) -> None:
    expected = network_tensors(network)
    if set(tensors) != set(expected):
        raise ValueError(f"tensors {sorted(tensors)} do not match the network {sorted(expected)}")
    for name, shape in expected.items():
        if tuple(tensors[name].shape) != shape:
            raise ValueError(f"tensor {name} has shape {tensors[name].shape}, not {shape}")
