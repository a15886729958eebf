"""The checkpoint file: what resuming needs to continue a run bit for bit, as named fields
(safetensors tensors and one JSON document, version 3, that ``checkpoint.schema.json``
describes; docs/training.md lists them). No field names a module, a class or a private
attribute, so code can move and old files still load; reading checks everything before use and
runs no code. Version 2 files are read through agents.training.checkpoint_v2.
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
VERSION = 3
METADATA_KEY = "trash_env_checkpoint"
OLD_MAGIC = b"trash-env checkpoint v1\n"  # the pickle format, refused
MAX_FILE_BYTES = 16 * 2**30
MAX_HEADER_BYTES = 1 << 28
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


def pack(main: dict[str, Any], env: tuple[dict, dict]) -> tuple[dict, dict[str, np.ndarray]]:
    """The document and tensors of a checkpoint: ``main`` holds the training state as
    :func:`read_checkpoint` returns it, ``env`` the envs' document and arrays."""
    optimizer, rng = main["optimizer"], main["rng"]
    tensors = {f"policy/{k}": v for k, v in main["policy"].items()}
    for i, values in optimizer["state"].items():
        tensors.update({f"optimizer/{i}/{k}": v for k, v in values.items()})
    tensors.update({"rng/torch": rng["torch"], "rng/numpy": rng["numpy"][1]})
    tensors["rng/python"] = np.asarray(rng["python"][1], np.uint32)
    tensors.update({k: main[k] for k in ("last_obs", "last_episode_starts")})
    tensors.update({f"env/{k}": v for k, v in env[1].items()})
    _, _, pos, has_gauss, gaussian = rng["numpy"]
    numpy = {"pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(gaussian)}
    keep = ("timesteps", "snapshots", "imitation", "flags", "shaping_end", "sb3")
    document = {"format": FORMAT, "version": VERSION, **{key: main[key] for key in keep}}
    document["optimizer"] = {"param_groups": optimizer["param_groups"]}
    document["rng"] = {"numpy": numpy, "python": {"gauss": rng["python"][2]}}
    document["env"] = env[0]
    return document, {k: np.ascontiguousarray(np.asarray(v)) for k, v in tensors.items()}


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def checkpoint_state(model: Any, env: tuple[dict, dict], **fields: Any) -> tuple[dict, dict]:
    """A checkpoint of ``model`` at its step: ``env`` from agents.training.env_state,
    ``fields`` the run's ``snapshots``, ``imitation``, ``flags`` and ``shaping_end``."""
    import random

    import torch

    params = model.get_parameters()  # stable-baselines3's: the policy's and its optimizer's
    optimizer = params["policy.optimizer"]
    state = {i: {k: torch.as_tensor(v).numpy() for k, v in s.items()}
             for i, s in optimizer["state"].items()}  # fmt: skip
    main = {
        **fields,
        "timesteps": int(model.num_timesteps),
        "policy": {k: v.numpy() for k, v in params["policy"].items()},
        "optimizer": {"state": state, "param_groups": optimizer["param_groups"]},
        "sb3": {
            "n_updates": int(model._n_updates),
            "episode_num": int(model._episode_num),
            "progress_remaining": float(model._current_progress_remaining),
            "ep_info_buffer": [{k: _py(v) for k, v in e.items()} for e in model.ep_info_buffer],
            "ep_success_buffer": [_py(v) for v in model.ep_success_buffer],
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
    required = [name for name in RESUME_FLAGS if name not in FLAGS_ADDED]
    schema["properties"]["flags"].update(required=required)
    schema["properties"]["flags"]["propertyNames"] = {"enum": list(RESUME_FLAGS)}
    return Draft202012Validator(schema)


def _read_container(data: bytes) -> tuple[Any, dict[str, np.ndarray]]:
    """The JSON document and the tensors of a checkpoint file's bytes (checked container)."""
    from safetensors.numpy import load

    from agents.policies.model_file import parse_json

    if data.startswith(OLD_MAGIC):
        raise ValueError(
            "it is in the old pickle format, which ran any code a crafted file held; the format "
            "changed to tensors and JSON and old checkpoints cannot be resumed: start the run again"
        )
    size = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    if not 0 <= size <= min(MAX_HEADER_BYTES, len(data) - 8):
        raise ValueError("damaged or truncated (its header runs past the end of the file)")
    header = parse_json(data[8 : 8 + size], "its header", max_bytes=MAX_HEADER_BYTES, max_depth=4)
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(metadata, dict) or set(metadata) != {METADATA_KEY}:
        raise ValueError("not a train.py checkpoint (no trash-env checkpoint metadata)")
    document = parse_json(metadata[METADATA_KEY], "its document", max_depth=200)
    try:
        return document, load(data)
    except Exception as error:  # safetensors' own errors (no code runs): say what they say
        raise ValueError(f"damaged or truncated ({str(error)[:200]})") from None


def _take(tensors: dict[str, np.ndarray], name: str, dtype: Any, rank: int = -1) -> Any:
    array = tensors.pop(name, None)
    if array is None or array.dtype != dtype or rank not in (-1, array.ndim):
        raise ValueError(f"the tensor {name} is missing or not {np.dtype(dtype)} (rank {rank})")
    return array


def unpack(document: dict, tensors: dict[str, np.ndarray]) -> dict[str, Any]:
    """The training state of a document checked against the schema, and its tensors (each
    checked here or, the env's, by agents.training.env_state)."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    error = best_match(_validator().iter_errors(document))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "top level"
        raise ValueError(f"its document at {where}: {error.message[:200]}")
    try:  # NaN passes every range of the schema; JSON has none, a migrated version 2 may
        json.dumps(document, allow_nan=False)
    except ValueError:
        raise ValueError("its document holds a number that is not finite") from None
    state = {k: v for k, v in document.items() if k not in ("format", "version", "env", "rng")}
    fixed = {name: _take(tensors, name, *kind) for name, kind in FIXED.items()}
    names = sorted(tensors)
    state["policy"] = {n[7:]: _take(tensors, n, np.float32) for n in names if n[:7] == "policy/"}
    optimizer: dict[int, dict[str, np.ndarray]] = {}
    for name in [n for n in names if n.startswith("optimizer/")]:
        if not re.fullmatch(r"optimizer/\d{1,4}/\w{1,64}", name):
            raise ValueError(f"a bad tensor name {name[:80]!r}")
        _, i, key = name.split("/")
        optimizer.setdefault(int(i), {})[key] = _take(tensors, name, np.float32)
    state["optimizer"] = {"state": optimizer, **document["optimizer"]}
    if set(optimizer) != {p for g in document["optimizer"]["param_groups"] for p in g["params"]}:
        raise ValueError("its optimizer state does not cover its parameters")
    if fixed["rng/numpy"].shape != (624,) or fixed["rng/python"].shape != (625,):
        raise ValueError("its numpy or python random state has the wrong length")
    numpy, gauss = document["rng"]["numpy"], document["rng"]["python"]["gauss"]
    state["rng"] = {
        "torch": fixed["rng/torch"],
        "numpy": ("MT19937", fixed["rng/numpy"], numpy["pos"], numpy["has_gauss"],
                  numpy["cached_gaussian"]),
        "python": (3, tuple(int(x) for x in fixed["rng/python"]), gauss),
    }  # fmt: skip
    state.update(last_obs=fixed["last_obs"], last_episode_starts=fixed["last_episode_starts"])
    env, arrays = document["env"], {n[4:]: tensors.pop(n) for n in names if n[:4] == "env/"}
    if tensors or (env["kind"] != "batched" and arrays) or not state["policy"]:
        raise ValueError(f"unexpected or missing tensors ({', '.join(sorted(tensors))[:200]})")
    state["envs"] = [{**env, "arrays": arrays}] if env["kind"] == "batched" else env["envs"]
    return state


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checked contents of a checkpoint file; ``ValueError`` saying why it is refused."""
    from agents.training.checkpoint_v2 import migrate

    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ValueError(f"more than the {MAX_FILE_BYTES} bytes allowed")
        document, tensors = _read_container(path.read_bytes())
    except OSError as error:
        raise ValueError(f"cannot read it ({error.strerror or error})") from None
    if isinstance(document, dict) and document.get("version") == 2:
        document, tensors = pack(*migrate(document, tensors))
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
    older = [p for p in folder.glob("step_*" + CHECKPOINT_SUFFIX) if checkpoint_step(p) < newest]
    candidates = ([] if where.is_dir() else [where]) + sorted(
        [p for p in older if checkpoint_step(p) >= 0], key=checkpoint_step, reverse=True
    )
    if not candidates:
        raise ValueError(f"--resume: no step_N{CHECKPOINT_SUFFIX} checkpoint in {shown}")
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
    raise ValueError(f"--resume: no usable checkpoint in {shown} (every one is damaged or refused)")


# ---------------------------------------------------------------------------- restoring


def restore_model(state: dict[str, Any], venv: Any, model: Any) -> Any:
    """``model`` (a new MaskablePPO of the checkpoint's settings on ``venv``) given the
    checkpoint's weights, optimizer, counters, last observations and random states."""
    import random
    from collections import deque

    import torch

    where = "--resume: the checkpoint's"
    optimizer = state["optimizer"]
    groups = [
        {**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in optimizer["param_groups"]
    ]
    params = {
        "policy": {k: torch.from_numpy(v.copy()) for k, v in state["policy"].items()},
        "policy.optimizer": {
            "state": {i: {k: torch.from_numpy(v.copy()) for k, v in s.items()}
                      for i, s in optimizer["state"].items()},
            "param_groups": groups,
        },
    }  # fmt: skip
    try:
        model.set_parameters(params, exact_match=True)  # stable-baselines3's: strict
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        first = (str(error).splitlines() or [type(error).__name__])[0][:200]
        raise ValueError(
            f"{where} policy or optimizer does not fit this network ({first})"
        ) from None
    obs, starts = state["last_obs"], state["last_episode_starts"]
    if obs.shape != (venv.num_envs, *venv.observation_space.shape) or starts.shape != (
        venv.num_envs,
    ):
        raise ValueError(f"{where} last observations do not fit these envs")
    sb3, window = state["sb3"], model._stats_window_size
    model.num_timesteps = int(state["timesteps"])
    model._n_updates, model._episode_num = sb3["n_updates"], sb3["episode_num"]
    model._current_progress_remaining = sb3["progress_remaining"]
    model.ep_info_buffer = deque(sb3["ep_info_buffer"], maxlen=window)
    model.ep_success_buffer = deque(sb3["ep_success_buffer"], maxlen=window)
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
