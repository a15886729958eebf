"""The checkpoint file: what resuming needs to continue a run bit for bit, as named fields
(safetensors tensors and one JSON document, version 3, that ``checkpoint.schema.json``
describes; docs/training.md lists them). No field names a module, a class or a private
attribute, so code can move and old files still load; reading checks everything before use and
runs no code.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from agents.training.config import FLAGS_ADDED, RESUME_FLAGS

CHECKPOINT_SUFFIX = ".ckpt"
FORMAT = "trash-env-checkpoint"
METADATA_KEY = "trash_env_checkpoint"
OLD_MAGIC = b"trash-env checkpoint v1\n"  # the pickle format, refused
MAX_FILE_BYTES = 16 * 2**30
# The sb3 counters' names -> the model's attributes (stable-baselines3's MaskablePPO).
SB3 = {"n_updates": "_n_updates", "episode_num": "_episode_num",
       "progress_remaining": "_current_progress_remaining", "ep_info_buffer": "ep_info_buffer",
       "ep_success_buffer": "ep_success_buffer"}  # fmt: skip
# The tensors every checkpoint has: dtype and shape (-1: any length).
FIXED = {
    "rng/torch": (np.uint8, (-1,)),
    "rng/numpy": (np.uint32, (624,)),
    "rng/python": (np.uint32, (625,)),
    "last_obs": (np.float32, (-1, -1)),
    "last_episode_starts": (np.bool_, (-1,)),
}


def checkpoint_step(path: Path) -> int:
    """N of ``step_N.ckpt`` (-1 for another name)."""
    match = re.fullmatch(r"step_(\d{1,12})" + re.escape(CHECKPOINT_SUFFIX), path.name)
    return int(match.group(1)) if match else -1


# ---------------------------------------------------------------------------- writing


def _plain(value: Any) -> Any:
    """A JSON value: NumPy scalars as numbers, deques as lists."""
    return json.loads(
        json.dumps(value, default=lambda v: v.item() if isinstance(v, np.generic) else list(v))
    )


def checkpoint_state(model: Any, env: tuple[dict, dict], **fields: Any) -> tuple[dict, dict]:
    """The document and tensors of a checkpoint of ``model`` at its step: ``env`` from
    agents.training.env_state, ``fields`` the run's ``snapshots``, ``imitation``, ``flags`` and
    ``shaping_end``."""
    import random

    import torch

    params = model.get_parameters()  # stable-baselines3's: the policy's and its optimizer's
    optimizer = params["policy.optimizer"]
    tensors = {f"policy/{k}": v.numpy() for k, v in params["policy"].items()}
    for i, values in optimizer["state"].items():
        tensors.update(
            {f"optimizer/{i}/{k}": torch.as_tensor(v).numpy() for k, v in values.items()}
        )
    _, words, pos, has_gauss, gaussian = np.random.get_state()
    _, python, gauss = random.getstate()
    tensors.update({"rng/torch": torch.get_rng_state().numpy(), "rng/numpy": words,
                    "rng/python": np.array(python, np.uint32), "last_obs": model._last_obs,
                    "last_episode_starts": model._last_episode_starts})  # fmt: skip
    tensors.update({f"env/{k}": v for k, v in env[1].items()})
    numpy = {"pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(gaussian)}
    document = {
        **{"format": FORMAT, "version": 3, "timesteps": int(model.num_timesteps), **fields},
        "sb3": {key: _plain(getattr(model, attr)) for key, attr in SB3.items()},
        "optimizer": {"param_groups": _plain(optimizer["param_groups"])},
        "rng": {"numpy": numpy, "python": {"gauss": gauss}},
        "env": env[0],
    }
    return document, {k: np.ascontiguousarray(np.asarray(v)) for k, v in tensors.items()}


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
    required = [name for name in RESUME_FLAGS if name not in FLAGS_ADDED]
    schema["properties"]["flags"].update(required=required)
    schema["properties"]["flags"]["propertyNames"] = {"enum": list(RESUME_FLAGS)}
    return Draft202012Validator(schema)


def _read_file(path: Path) -> tuple[Any, dict[str, np.ndarray]]:
    """The JSON document and the tensors of a checkpoint file, parsed by safetensors (which
    bounds its header and checks every tensor's extent) and a bounded JSON reader."""
    from safetensors import safe_open

    from agents.policies.model_file import parse_json

    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"more than the {MAX_FILE_BYTES} bytes allowed")
    with path.open("rb") as handle:
        if handle.read(len(OLD_MAGIC)) == OLD_MAGIC:
            raise ValueError(
                "it is in the old pickle format, which ran any code a crafted file held; the "
                "format changed to tensors and JSON and old checkpoints cannot be resumed: "
                "start the run again"
            )
    try:
        with safe_open(str(path), "np") as file:
            metadata, tensors = file.metadata(), {k: file.get_tensor(k) for k in file.keys()}
    except Exception as error:  # safetensors' own errors (no code runs): say what they say
        raise ValueError(f"damaged or truncated ({str(error)[:200]})") from None
    if not isinstance(metadata, dict) or set(metadata) != {METADATA_KEY}:
        raise ValueError("not a train.py checkpoint (no trash-env checkpoint metadata)")
    return parse_json(metadata[METADATA_KEY], "its document", max_depth=200), tensors


def unpack(document: Any, tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    """The training state: the document checked against the schema, with ``tensors`` (the
    checked policy, optimizer, rng and last-step tensors) and ``envs`` (the envs' fields)."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    from agents.training.checkpoint_checks import check_tensors

    error = best_match(_validator().iter_errors(document))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "top level"
        raise ValueError(f"its document at {where}: {error.message[:200]}")
    for name, (dtype, shape) in FIXED.items():
        array = tensors.get(name)
        if (
            array is None
            or array.dtype != dtype
            or array.ndim != len(shape)
            or any(want not in (-1, have) for want, have in zip(shape, array.shape, strict=True))
        ):
            wanted = f"{np.dtype(dtype)} of shape {shape}".replace("-1", "n")
            raise ValueError(f"the tensor {name} is missing or not {wanted}")
    env = document["env"]  # its arrays are checked by agents.training.env_state
    arrays = {n[4:]: tensors.pop(n) for n in list(tensors) if re.fullmatch(r"env/[\w/]{1,200}", n)}
    policy = [n for n in tensors if re.fullmatch(r"policy/[\w.]{1,200}", n)]
    optimizer = [n for n in tensors if re.fullmatch(r"optimizer/\d{1,4}/\w{1,64}", n)]
    odd = set(tensors) - set(FIXED) - set(policy) - set(optimizer)
    if odd or not policy or (env["kind"] != "batched" and arrays):
        raise ValueError(f"unexpected or missing tensors ({', '.join(sorted(odd))[:200]})")
    if any(tensors[n].dtype != np.float32 for n in policy + optimizer):
        raise ValueError("its policy or optimizer tensors are not float32")
    params = {p for g in document["optimizer"]["param_groups"] for p in g["params"]}
    if {int(n.split("/")[1]) for n in optimizer} != params:
        raise ValueError("its optimizer state does not cover its parameters")
    check_tensors(document, tensors)
    state = {k: v for k, v in document.items() if k not in ("format", "version", "env")}
    envs = [{**env, "arrays": arrays}] if env["kind"] == "batched" else env["envs"]
    return {**state, "tensors": tensors, "envs": envs}


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checked contents of a checkpoint file; ``ValueError`` saying why it is refused."""
    try:
        document, tensors = _read_file(path)
    except OSError as error:
        raise ValueError(f"cannot read it ({error.strerror or error})") from None
    if isinstance(document, dict) and document.get("version") == 2:
        raise ValueError(
            "it is a version 2 checkpoint, a format of development versions that no release "
            "wrote: it cannot be resumed, start the run again"
        )
    return {**unpack(document, tensors), "path": str(path)}


def find_checkpoint(where: Path) -> dict[str, Any]:
    """The newest good checkpoint: ``where`` itself, or (a directory) its latest; one that
    is refused is reported on stderr, in one line, and the previous one is used."""
    from trash_env.files import safe_text

    shown = safe_text(repr(str(where)))
    if where.is_file() and where.suffix != CHECKPOINT_SUFFIX:
        raise ValueError(
            f"--resume takes a step_N{CHECKPOINT_SUFFIX} checkpoint written by train.py or "
            f"its directory, got {shown}"
        )
    if not where.exists():
        raise ValueError(f"--resume: checkpoint {shown} not found")
    folder, newest = (where, 10**13) if where.is_dir() else (where.parent, checkpoint_step(where))
    older = [
        p for p in folder.glob("step_*" + CHECKPOINT_SUFFIX) if 0 <= checkpoint_step(p) < newest
    ]
    candidates = ([where] if where.is_file() else []) + sorted(
        older, key=checkpoint_step, reverse=True
    )
    for path in candidates:
        try:
            state = read_checkpoint(path)
        except ValueError as error:
            print(f"train.py: --resume: skipping checkpoint {safe_text(path)}: {safe_text(error)}",
                  file=sys.stderr)  # fmt: skip
            continue
        if path != candidates[0]:
            print(f"train.py: --resume: using the previous good checkpoint {safe_text(path)}",
                  file=sys.stderr)  # fmt: skip
        return state
    if not candidates:
        raise ValueError(f"--resume: no step_N{CHECKPOINT_SUFFIX} checkpoint in {shown}")
    raise ValueError(f"--resume: no usable checkpoint in {shown} (every one is damaged or refused)")


# ---------------------------------------------------------------------------- restoring


def restore_model(state: dict[str, Any], venv: Any, model: Any) -> Any:
    """``model`` (a new MaskablePPO of the checkpoint's settings on ``venv``) given the
    checkpoint's weights, optimizer, counters, last observations and random states."""
    import random
    from collections import deque

    import torch

    from agents.training.checkpoint_checks import check_fits
    from trash_env.files import safe_text

    where, tensors = "--resume: the checkpoint's", state["tensors"]

    def named(prefix: str) -> dict[str, Any]:
        return {n[len(prefix) :]: torch.from_numpy(v.copy()) for n, v in tensors.items()
                if n.startswith(prefix)}  # fmt: skip

    try:
        check_fits(tensors, model, venv)
    except ValueError as error:
        raise ValueError(f"--resume: the checkpoint {safe_text(state['path'])}: {error}") from None
    groups = state["optimizer"]["param_groups"]
    optimizer = {
        "state": {i: named(f"optimizer/{i}/") for g in groups for i in g["params"]},
        "param_groups": [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in groups],
    }
    try:  # stable-baselines3's, strict
        params = {"policy": named("policy/"), "policy.optimizer": optimizer}
        model.set_parameters(params, exact_match=True)
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        first = (str(error).splitlines() or [type(error).__name__])[0][:200]
        raise ValueError(
            f"{where} policy or optimizer does not fit this network ({first})"
        ) from None
    obs, starts = tensors["last_obs"], tensors["last_episode_starts"]
    model.num_timesteps = int(state["timesteps"])
    for key, attr in SB3.items():  # the two buffers as deques of the model's window
        value = state["sb3"][key]
        window = model._stats_window_size
        setattr(model, attr, deque(value, maxlen=window) if isinstance(value, list) else value)
    model._last_obs = obs.astype(venv.observation_space.dtype)
    model._last_episode_starts = starts
    # The model's constructor reseeded every generator: put back the checkpoint's states.
    numpy, gauss = state["rng"]["numpy"], state["rng"]["python"]["gauss"]
    try:
        torch.set_rng_state(torch.from_numpy(tensors["rng/torch"].copy()))
        words = tensors["rng/numpy"]
        np.random.set_state(
            ("MT19937", words, numpy["pos"], numpy["has_gauss"], numpy["cached_gaussian"])
        )
        random.setstate((3, tuple(tensors["rng/python"].tolist()), gauss))
    except (RuntimeError, ValueError, TypeError) as error:
        raise ValueError(f"{where} random states are damaged ({str(error)[:200]})") from None
    return model
