"""The checkpoint file: everything resuming needs to continue a run bit for bit."""

from __future__ import annotations

import hashlib
import pickle
import re
import sys
from pathlib import Path
from typing import Any

CHECKPOINT_SUFFIX = ".ckpt"
CHECKPOINT_MAGIC = b"trash-env checkpoint v1\n"


def checkpoint_step(path: Path) -> int:
    """N of ``step_N.ckpt`` (-1 for another name)."""
    match = re.fullmatch(r"step_(\d+)" + re.escape(CHECKPOINT_SUFFIX), path.name)
    return int(match.group(1)) if match else -1


def write_checkpoint(path: Path, state: dict[str, Any]) -> None:
    from trash_env.cli import atomic_write_bytes

    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    atomic_write_bytes(path, CHECKPOINT_MAGIC + hashlib.sha256(payload).digest() + payload)


def read_checkpoint_payload(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read it ({error})") from None
    head = len(CHECKPOINT_MAGIC)
    if not data.startswith(CHECKPOINT_MAGIC):
        raise ValueError("not a train.py checkpoint (wrong first bytes)")
    digest, payload = data[head:head + 32], data[head + 32:]
    if len(digest) < 32 or hashlib.sha256(payload).digest() != digest:
        raise ValueError("damaged or truncated (its SHA-256 does not match)")
    return payload


def find_checkpoint(where: Path) -> dict[str, Any]:
    if where.is_dir():
        candidates = sorted(where.glob("step_*" + CHECKPOINT_SUFFIX), key=checkpoint_step,
                            reverse=True)
        if not candidates:
            raise ValueError(f"--resume: no step_N{CHECKPOINT_SUFFIX} checkpoint in "
                             f"{str(where)!r}")
    elif where.is_file():
        if where.suffix != CHECKPOINT_SUFFIX:
            raise ValueError(f"--resume takes a step_N{CHECKPOINT_SUFFIX} checkpoint written "
                             f"by train.py or its directory, got {str(where)!r}")
        step = checkpoint_step(where)
        older = [p for p in where.parent.glob("step_*" + CHECKPOINT_SUFFIX)
                 if 0 <= checkpoint_step(p) < step]
        candidates = [where] + sorted(older, key=checkpoint_step, reverse=True)
    else:
        raise ValueError(f"--resume: checkpoint {str(where)!r} not found")
    for path in candidates:
        try:
            payload = read_checkpoint_payload(path)
        except ValueError as error:
            print(f"train.py: --resume: skipping checkpoint {path}: {error}", file=sys.stderr)
            continue
        try:
            state = pickle.loads(payload)
        except Exception as error:
            print(f"train.py: --resume: skipping checkpoint {path}: it does not load "
                  f"({type(error).__name__}: {error})", file=sys.stderr)
            continue
        if not isinstance(state, dict) or state.get("format") != "trash-env-checkpoint":
            print(f"train.py: --resume: skipping checkpoint {path}: not a train.py "
                  "checkpoint", file=sys.stderr)
            continue
        if path != candidates[0]:
            print(f"train.py: --resume: using the previous good checkpoint {path}",
                  file=sys.stderr)
        state["path"] = str(path)
        return state
    raise ValueError(f"--resume: no usable checkpoint in {str(where)!r} (every one is damaged)")


def checkpoint_state(model: Any, envs: Any, snapshots: list[str], imitation: dict[str, float],
                     flags: dict[str, Any], shaping_end: int) -> dict[str, Any]:
    import io
    import random

    import numpy as np
    import torch

    buffer = io.BytesIO()
    model.save(buffer)
    return {
        "format": "trash-env-checkpoint",
        "timesteps": int(model.num_timesteps),
        "model": buffer.getvalue(),
        "envs": envs,
        "last_obs": model._last_obs,
        "last_episode_starts": model._last_episode_starts,
        "snapshots": list(snapshots),
        "imitation": imitation,
        "flags": flags,
        "shaping_end": shaping_end,
        "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                "python": random.getstate()},
    }


def restore_model(state: dict[str, Any], venv: Any, tensorboard: str | None) -> Any:
    import io
    import random

    import numpy as np
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(io.BytesIO(state["model"]), env=venv, device="cpu",
                             tensorboard_log=tensorboard, force_reset=False)
    if model.observation_space.shape != venv.observation_space.shape:
        raise ValueError("--resume: the checkpoint's model does not fit these envs")
    model._last_obs = state["last_obs"]
    model._last_episode_starts = state["last_episode_starts"]
    torch.set_rng_state(state["rng"]["torch"])
    np.random.set_state(state["rng"]["numpy"])
    random.setstate(state["rng"]["python"])
    return model
