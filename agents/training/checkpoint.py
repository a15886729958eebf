"""The checkpoint file: everything resuming needs to continue a run bit for bit, as named
fields, and nothing that runs code when read.

``step_N.ckpt`` is a safetensors file: its tensors are named arrays (``policy/<name>``,
``optimizer/<param>/<name>``, ``rng/torch``, ``rng/numpy``, ``rng/python``, ``last_obs``,
``last_episode_starts``, ``env/...``), its metadata one JSON document, version 3, that
``checkpoint.schema.json`` describes (the counters, schedules, self-play pool, optimizer
settings, random states and envs). No field names a module, a class or a private attribute:
code can be moved or renamed and old files still load. Reading checks the container, the
document against the schema and every tensor's name, type and shape before anything is used;
the envs are then checked as hard as new games (agents.training.env_state). Version 2 files
are read through agents.training.checkpoint_v2; the older pickle format is refused.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from agents.training.config import RESUME_FLAGS

CHECKPOINT_SUFFIX = ".ckpt"
FORMAT = "trash-env-checkpoint"
VERSION = 3
METADATA_KEY = "trash_env_checkpoint"
OLD_MAGIC = b"trash-env checkpoint v1\n"  # the pickle format, refused
MAX_FILE_BYTES = 16 * 2**30
MAX_HEADER_BYTES = 1 << 28
NUMPY_RNG = ("pos", "has_gauss", "cached_gaussian")
FIXED = {  # tensor name -> (dtype, rank)
    "rng/torch": (np.uint8, 1),
    "rng/numpy": (np.uint32, 1),
    "rng/python": (np.uint32, 1),
    "last_obs": (np.float32, 2),
    "last_episode_starts": (np.bool_, 1),
}


def checkpoint_step(path: Path) -> int:
    """N of ``step_N.ckpt`` (-1 for another name)."""
    match = re.fullmatch(r"step_(\d{1,12})" + re.escape(CHECKPOINT_SUFFIX), path.name)
    return int(match.group(1)) if match else -1


# ---------------------------------------------------------------------------- writing


def pack(main: dict[str, Any], env: tuple[dict, dict[str, np.ndarray]]) -> tuple[dict, dict]:
    """The document and tensors of a checkpoint: ``main`` holds the training state as
    :func:`read_checkpoint` returns it, ``env`` the envs' document and arrays."""
    optimizer, rng = main["optimizer"], main["rng"]
    _, keys, pos, has_gauss, cached_gaussian = rng["numpy"]
    version, internal, gauss = rng["python"]
    tensors = {f"policy/{k}": v for k, v in main["policy"].items()}
    for i, values in optimizer["state"].items():
        tensors.update({f"optimizer/{i}/{k}": np.asarray(v) for k, v in values.items()})
    tensors.update(
        {
            "rng/torch": rng["torch"],
            "rng/numpy": np.asarray(keys, np.uint32),
            "rng/python": np.asarray(internal, np.uint32),
            "last_obs": main["last_obs"],
            "last_episode_starts": main["last_episode_starts"],
        }
    )
    tensors.update({f"env/{k}": v for k, v in env[1].items()})
    keep = ("timesteps", "snapshots", "imitation", "flags", "shaping_end", "sb3")
    document = {
        "format": FORMAT,
        "version": VERSION,
        **{key: main[key] for key in keep},
        "optimizer": {"param_groups": optimizer["param_groups"]},
        "rng": {
            "numpy": dict(
                zip(NUMPY_RNG, (int(pos), int(has_gauss), float(cached_gaussian)), strict=True)
            ),
            "python": {"gauss": gauss},
        },
        "env": env[0],
    }
    return document, {k: np.ascontiguousarray(v) for k, v in tensors.items()}


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def checkpoint_state(
    model: Any,
    env: tuple[dict, dict[str, np.ndarray]],
    snapshots: list[str],
    imitation: dict[str, float],
    flags: dict[str, Any],
    shaping_end: int,
) -> tuple[dict, dict]:
    """A checkpoint of ``model`` at its step (``env``: agents.training.env_state)."""
    import random

    import torch

    optimizer = model.policy.optimizer.state_dict()
    main = {
        "timesteps": int(model.num_timesteps),
        "snapshots": list(snapshots),
        "imitation": dict(imitation),
        "flags": dict(flags),
        "shaping_end": int(shaping_end),
        "policy": {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()},
        "optimizer": {
            "state": {
                int(i): {k: torch.as_tensor(v).detach().cpu().numpy() for k, v in s.items()}
                for i, s in optimizer["state"].items()
            },
            "param_groups": optimizer["param_groups"],
        },
        "sb3": {
            "n_updates": int(model._n_updates),
            "episode_num": int(model._episode_num),
            "progress_remaining": float(model._current_progress_remaining),
            "ep_info_buffer": [
                {k: _py(v) for k, v in e.items()} for e in model.ep_info_buffer or []
            ],
            "ep_success_buffer": [_py(v) for v in model.ep_success_buffer or []],
        },
        "rng": {
            "torch": torch.get_rng_state().numpy(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
        },
        "last_obs": np.asarray(model._last_obs),
        "last_episode_starts": np.asarray(model._last_episode_starts),
    }
    return pack(main, env)


def write_checkpoint(path: Path, state: tuple[dict, dict]) -> None:
    """The checkpoint file (atomically: a kill leaves the old file or the new one)."""
    from safetensors.numpy import save

    from trash_env.files import atomic_write_bytes

    document, tensors = state
    atomic_write_bytes(path, save(tensors, metadata={METADATA_KEY: json.dumps(document)}))


# ---------------------------------------------------------------------------- reading


@cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    schema = json.loads(Path(__file__).with_name("checkpoint.schema.json").read_text())
    schema["properties"]["flags"].update(required=list(RESUME_FLAGS))
    schema["properties"]["flags"]["propertyNames"] = {"enum": list(RESUME_FLAGS)}
    return Draft202012Validator(schema)


def _read_container(data: bytes) -> tuple[Any, dict[str, np.ndarray]]:
    """The JSON document and the tensors of a checkpoint file's bytes (checked container)."""
    from safetensors.numpy import load

    from agents.policies.model_file import parse_json

    if data.startswith(OLD_MAGIC):
        raise ValueError(
            "it is in the old pickle format, which ran any code a crafted file "
            "held; the format changed to tensors and JSON and old checkpoints "
            "cannot be resumed: start the run again"
        )
    size = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    if not 0 <= size <= min(MAX_HEADER_BYTES, len(data) - 8):
        raise ValueError("damaged or truncated (its header runs past the end of the file)")
    header = parse_json(data[8 : 8 + size], "its header", max_bytes=MAX_HEADER_BYTES, max_depth=4)
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(metadata, dict) or set(metadata) != {METADATA_KEY}:
        raise ValueError("not a train.py checkpoint (no trash-env checkpoint metadata)")
    document = parse_json(metadata[METADATA_KEY], "its document", max_depth=2000)
    try:
        tensors = load(data)
    except Exception as error:  # safetensors' own errors (no code runs): say what they say
        raise ValueError(f"damaged or truncated ({str(error)[:200]})") from None
    return document, tensors


def check_document(document: Any) -> None:
    """``ValueError`` naming the first place where ``document`` breaks the schema."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    error = best_match(_validator().iter_errors(document))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "top level"
        raise ValueError(f"its document at {where}: {error.message[:200]}")


def _take(tensors: dict[str, np.ndarray], name: str, dtype: Any, rank: int) -> np.ndarray:
    array = tensors.pop(name, None)
    if array is None or array.dtype != dtype or array.ndim != rank:
        raise ValueError(f"the tensor {name} is missing or not {np.dtype(dtype)} of rank {rank}")
    return array


def unpack(document: dict, tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    """The training state of a checked document and its tensors (each tensor is checked here
    or, the env's, by agents.training.env_state)."""
    state = {k: v for k, v in document.items() if k not in ("format", "version", "env", "rng")}
    fixed = {name: _take(tensors, name, *kind) for name, kind in FIXED.items()}
    state["policy"] = {
        name[7:]: _take(tensors, name, np.float32, tensors[name].ndim)
        for name in [n for n in tensors if n.startswith("policy/")]
    }
    if not state["policy"]:
        raise ValueError("it holds no policy tensors")
    optimizer: dict[int, dict[str, np.ndarray]] = {}
    for name in [n for n in tensors if n.startswith("optimizer/")]:
        match = re.fullmatch(r"optimizer/(\d{1,4})/(\w{1,64})", name)
        if match is None:
            raise ValueError(f"a bad tensor name {name[:80]!r}")
        array = _take(tensors, name, np.float32, tensors[name].ndim)
        optimizer.setdefault(int(match.group(1)), {})[match.group(2)] = array
    state["optimizer"] = {"state": optimizer, **document["optimizer"]}
    numpy, python = document["rng"]["numpy"], document["rng"]["python"]
    if fixed["rng/numpy"].shape != (624,) or fixed["rng/python"].shape != (625,):
        raise ValueError("its numpy or python random state has the wrong length")
    state["rng"] = {
        "torch": fixed["rng/torch"],
        "numpy": ("MT19937", fixed["rng/numpy"], *(numpy[k] for k in NUMPY_RNG)),
        "python": (3, tuple(int(x) for x in fixed["rng/python"]), python["gauss"]),
    }
    state.update(last_obs=fixed["last_obs"], last_episode_starts=fixed["last_episode_starts"])
    env_arrays = {n[4:]: tensors.pop(n) for n in [n for n in tensors if n.startswith("env/")]}
    if tensors:
        raise ValueError(f"unexpected tensors {', '.join(sorted(tensors))[:200]}")
    env = document["env"]
    state["envs"] = [{**env, "arrays": env_arrays}] if env["kind"] == "batched" else env["envs"]
    if env["kind"] != "batched" and env_arrays:
        raise ValueError("solo envs hold no arrays")
    return state


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checked contents of a checkpoint file; ``ValueError`` saying why it is refused."""
    from agents.training.checkpoint_v2 import migrate

    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{size} bytes, more than the {MAX_FILE_BYTES} allowed")
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read it ({error.strerror or error})") from None
    document, tensors = _read_container(data)
    if isinstance(document, dict) and document.get("version") == 2:
        document, tensors = migrate(document, tensors)
    check_document(document)
    state = unpack(document, tensors)
    state["path"] = str(path)
    return state


def find_checkpoint(where: Path) -> dict[str, Any]:
    """The newest good checkpoint: ``where`` itself, or (a directory) its latest; one that
    is refused is reported on stderr, in one line, and the previous one is used."""
    from trash_env.files import safe_text

    if where.is_dir():
        candidates = sorted(
            where.glob("step_*" + CHECKPOINT_SUFFIX), key=checkpoint_step, reverse=True
        )
        if not candidates:
            raise ValueError(
                f"--resume: no step_N{CHECKPOINT_SUFFIX} checkpoint in "
                f"{safe_text(repr(str(where)))}"
            )
    elif where.is_file():
        if where.suffix != CHECKPOINT_SUFFIX:
            raise ValueError(
                f"--resume takes a step_N{CHECKPOINT_SUFFIX} checkpoint written "
                f"by train.py or its directory, got {safe_text(repr(str(where)))}"
            )
        step = checkpoint_step(where)
        older = [
            p
            for p in where.parent.glob("step_*" + CHECKPOINT_SUFFIX)
            if 0 <= checkpoint_step(p) < step
        ]
        candidates = [where] + sorted(older, key=checkpoint_step, reverse=True)
    else:
        raise ValueError(f"--resume: checkpoint {safe_text(repr(str(where)))} not found")
    for path in candidates:
        try:
            state = read_checkpoint(path)
        except ValueError as error:
            print(
                f"train.py: --resume: skipping checkpoint {safe_text(path)}: {safe_text(error)}",
                file=sys.stderr,
            )
            continue
        if path != candidates[0]:
            print(
                f"train.py: --resume: using the previous good checkpoint {safe_text(path)}",
                file=sys.stderr,
            )
        return state
    raise ValueError(
        f"--resume: no usable checkpoint in {safe_text(repr(str(where)))} (every "
        "one is damaged or refused)"
    )


# ---------------------------------------------------------------------------- restoring


def restore_model(state: dict[str, Any], venv: Any, model: Any) -> Any:
    """``model`` (a new MaskablePPO of the checkpoint's settings on ``venv``) given the
    checkpoint's weights, optimizer, counters, last observations and random states."""
    import random
    from collections import deque

    import torch

    where = "--resume: the checkpoint's"
    try:
        model.policy.load_state_dict(
            {k: torch.from_numpy(v.copy()) for k, v in state["policy"].items()}
        )
    except (RuntimeError, ValueError) as error:
        raise ValueError(
            f"{where} policy does not fit this network ({str(error).splitlines()[0][:200]})"
        ) from None
    optimizer = state["optimizer"]
    groups = [
        {**g, "betas": tuple(g["betas"])} if isinstance(g.get("betas"), list) else g
        for g in optimizer["param_groups"]
    ]
    tensors = {
        i: {k: torch.from_numpy(v.copy()) for k, v in s.items()}
        for i, s in optimizer["state"].items()
    }
    try:
        model.policy.optimizer.load_state_dict({"state": tensors, "param_groups": groups})
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{where} optimizer state does not fit this network ({str(error)[:200]})"
        ) from None
    obs, starts = state["last_obs"], state["last_episode_starts"]
    if obs.shape != (venv.num_envs, *venv.observation_space.shape) or starts.shape != (
        venv.num_envs,
    ):
        raise ValueError(f"{where} last observations do not fit these envs")
    sb3 = state["sb3"]
    model.num_timesteps = int(state["timesteps"])
    model._n_updates = sb3["n_updates"]
    model._episode_num = sb3["episode_num"]
    model._current_progress_remaining = sb3["progress_remaining"]
    model.ep_info_buffer = deque(sb3["ep_info_buffer"], maxlen=model._stats_window_size)
    model.ep_success_buffer = deque(sb3["ep_success_buffer"], maxlen=model._stats_window_size)
    model._last_obs = obs.astype(venv.observation_space.dtype)
    model._last_episode_starts = starts
    # The model's constructor reseeded every generator: put back the checkpoint's states.
    rng = state["rng"]
    try:
        torch.set_rng_state(torch.from_numpy(rng["torch"].copy()))
        np.random.set_state(rng["numpy"])
        random.setstate(rng["python"])
    except (RuntimeError, ValueError, TypeError) as error:
        raise ValueError(f"{where} random states are damaged ({str(error)[:200]})") from None
    return model
