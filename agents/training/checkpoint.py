"""The checkpoint file: everything resuming needs to continue a run bit for bit, and nothing
that runs code when read.

``step_N.ckpt`` is a safetensors file: its tensors are raw array bytes, its metadata one JSON
document (:mod:`agents.training.plain`) holding the policy and optimizer tensors' places, the
stable-baselines3 counters, the schedules, the self-play pool, the envs mid-episode (the
batched env's arrays and generators, or each solo env's ``Game`` and wrappers) and every
random state (torch's as bytes, NumPy's and Python's as numbers). Reading it builds only the
classes of :func:`env_classes` and checks every field before anything is used: a crafted,
truncated or mismatched file is a ``ValueError`` of one sentence. Files of the old format (a
pickle behind a magic line, which ran any code a crafted file held) are refused.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any

from agents.training.config import RESUME_FLAGS
from agents.training.plain import decode, encode

CHECKPOINT_SUFFIX = ".ckpt"
FORMAT = "trash-env-checkpoint"
VERSION = 2
METADATA_KEY = "trash_env_checkpoint"
OLD_MAGIC = b"trash-env checkpoint v1\n"  # the pickle format, refused
MAX_FILE_BYTES = 16 * 2**30
MAX_HEADER_BYTES = 1 << 30
MAIN_KEYS = {
    "timesteps",
    "snapshots",
    "imitation",
    "flags",
    "shaping_end",
    "policy",
    "optimizer",
    "sb3",
    "rng",
    "last_obs",
    "last_episode_starts",
}
SB3_KEYS = {"n_updates", "episode_num", "progress_remaining", "ep_info_buffer", "ep_success_buffer"}


def checkpoint_step(path: Path) -> int:
    """N of ``step_N.ckpt`` (-1 for another name)."""
    match = re.fullmatch(r"step_(\d{1,12})" + re.escape(CHECKPOINT_SUFFIX), path.name)
    return int(match.group(1)) if match else -1


def env_classes() -> dict[str, type]:
    """The classes a checkpoint's envs may hold: the training envs, their games, wrappers and
    spaces, and the built-in opponents (an opponent of another class cannot be checkpointed,
    which a run finds out at its start)."""
    import gymnasium as gym
    from stable_baselines3.common.monitor import Monitor

    from agents.bots.base import RandomAgent
    from agents.bots.heuristics import CountingAgent, GreedyAgent
    from agents.bots.search import SearchAgent
    from agents.policies.features import PairFeatures
    from agents.policies.policy import PolicyAgent, PretrainedAgent
    from agents.training.plain import class_name
    from agents.training.shaping import ProgressShaping
    from trash_env.engine import Decision, Event, Game
    from trash_env.match import Match
    from trash_env.solo import TrashSoloEnv
    from trash_env.view import PublicView

    classes: list[type] = [
        gym.spaces.Box,
        gym.spaces.Discrete,
        Monitor,
        RandomAgent,
        PairFeatures,
        CountingAgent,
        GreedyAgent,
        PolicyAgent,
        PretrainedAgent,
        SearchAgent,
        ProgressShaping,
        Decision,
        Event,
        Game,
        Match,
        TrashSoloEnv,
        PublicView,
    ]
    try:
        from trash_env.vector import batch, env

        classes += [
            env.TrashVecEnv,
            env.SoloBatch,
            env._Policy,
            batch.VectorGame,
            batch.RulesArrays,
        ]
    except ImportError:  # no numba: no batched path either
        pass
    return {class_name(cls): cls for cls in classes}


def converters() -> dict[str, Any]:
    """Classes rebuilt through their own checks: ``Rules`` from its options."""
    from trash_env.rules import Rules

    return {"trash_env.rules:Rules": (Rules, Rules.to_dict, lambda d: Rules.from_options(**d))}


def encode_env(env: Any) -> tuple[Any, list[Any]]:
    """One env (or the whole batch) as plain data: a JSON tree and its arrays."""
    return encode(env, env_classes(), converters())


# ---------------------------------------------------------------------------- writing


def checkpoint_state(
    model: Any,
    envs: list[tuple[Any, list[Any]]],
    snapshots: list[str],
    imitation: dict[str, float],
    flags: dict[str, Any],
    shaping_end: int,
) -> dict[str, Any]:
    """What a checkpoint of ``model`` at its step holds (``envs``: from :func:`encode_env`)."""
    import random

    import numpy as np
    import torch

    optimizer = model.policy.optimizer.state_dict()
    return {
        "main": {
            "timesteps": int(model.num_timesteps),
            "snapshots": list(snapshots),
            "imitation": dict(imitation),
            "flags": dict(flags),
            "shaping_end": int(shaping_end),
            "policy": {k: v.detach().cpu().numpy() for k, v in model.policy.state_dict().items()},
            "optimizer": {
                "state": {
                    int(i): {
                        k: v.detach().cpu().numpy() if torch.is_tensor(v) else v
                        for k, v in s.items()
                    }
                    for i, s in optimizer["state"].items()
                },
                "param_groups": optimizer["param_groups"],
            },
            "sb3": {
                "n_updates": int(model._n_updates),
                "episode_num": int(model._episode_num),
                "progress_remaining": float(model._current_progress_remaining),
                "ep_info_buffer": [dict(e) for e in model.ep_info_buffer or []],
                "ep_success_buffer": list(model.ep_success_buffer or []),
            },
            "rng": {
                "torch": torch.get_rng_state().numpy(),
                "numpy": np.random.get_state(),
                "python": random.getstate(),
            },
            "last_obs": np.asarray(model._last_obs),
            "last_episode_starts": np.asarray(model._last_episode_starts),
        },
        "envs": envs,
    }


def write_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """The checkpoint file (atomically: a kill leaves the old file or the new one)."""
    from safetensors.numpy import save

    from trash_env.files import atomic_write_bytes

    main, arrays = encode(state["main"], {}, converters())
    tensors = {f"main.{i}": a for i, a in enumerate(arrays)}
    env_trees = []
    for k, (tree, env_arrays) in enumerate(state["envs"]):
        env_trees.append({"tree": tree, "arrays": len(env_arrays)})
        tensors.update({f"envs.{k}.{i}": a for i, a in enumerate(env_arrays)})
    document = {
        "format": FORMAT,
        "version": VERSION,
        "main": main,
        "main_arrays": len(arrays),
        "envs": env_trees,
    }
    atomic_write_bytes(path, save(tensors, metadata={METADATA_KEY: json.dumps(document)}))


# ---------------------------------------------------------------------------- reading


def _read_document(data: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON document and the tensors of a checkpoint file's bytes (checked container)."""
    from safetensors.numpy import load

    from agents.policies.model_file import parse_json

    if data.startswith(OLD_MAGIC):
        raise ValueError(
            "it is in the old pickle format, which ran any code a crafted file "
            "held; the format changed to tensors and JSON and old checkpoints "
            "cannot be resumed: start the run again"
        )
    if len(data) < 8:
        raise ValueError("truncated (shorter than a safetensors header)")
    size = int.from_bytes(data[:8], "little")
    if size > min(MAX_HEADER_BYTES, len(data) - 8):
        raise ValueError("damaged or truncated (its header runs past the end of the file)")
    header = parse_json(data[8 : 8 + size], "its header", max_bytes=MAX_HEADER_BYTES, max_depth=4)
    metadata = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(metadata, dict) or set(metadata) != {METADATA_KEY}:
        raise ValueError("not a train.py checkpoint (no trash-env checkpoint metadata)")
    document = parse_json(
        metadata[METADATA_KEY], "its metadata", max_bytes=MAX_HEADER_BYTES, max_depth=2000
    )
    try:
        tensors = load(data)
    except Exception as error:  # safetensors' own errors (no code runs): say what they say
        raise ValueError(f"damaged or truncated ({str(error)[:200]})") from None
    return document, tensors


def _exact_keys(value: Any, keys: set[str], what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object")
    missing, extra = sorted(keys - set(value)), sorted(set(value) - keys)
    if missing or extra:
        raise ValueError(
            f"{what}: "
            + "; ".join(
                ([f"missing {', '.join(missing)}"] if missing else [])
                + ([f"unexpected {', '.join(map(str, extra))[:200]}"] if extra else [])
            )
        )
    return value


def _arrays(tensors: dict[str, Any], prefix: str, count: Any) -> list[Any]:
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 10**7:
        raise ValueError(f"a bad array count for {prefix}")
    try:
        return [tensors.pop(f"{prefix}.{i}") for i in range(count)]
    except KeyError as error:
        raise ValueError(f"the tensor {error} is missing") from None


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The checked contents of a checkpoint file; ``ValueError`` saying why it is refused."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{size} bytes, more than the {MAX_FILE_BYTES} allowed")
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read it ({error.strerror or error})") from None
    document, tensors = _read_document(data)
    _exact_keys(document, {"format", "version", "main", "main_arrays", "envs"}, "its document")
    if document["format"] != FORMAT or document["version"] != VERSION:
        raise ValueError(f"not a version {VERSION} train.py checkpoint")
    main_arrays = _arrays(tensors, "main", document["main_arrays"])
    envs = document["envs"]
    if not isinstance(envs, list) or not 1 <= len(envs) <= 4096:
        raise ValueError("its envs must be a list of 1 to 4096 entries")
    env_parts = []
    for k, entry in enumerate(envs):
        _exact_keys(entry, {"tree", "arrays"}, f"env {k}")
        env_parts.append((entry["tree"], _arrays(tensors, f"envs.{k}", entry["arrays"])))
    if tensors:
        raise ValueError(f"unexpected tensors {', '.join(sorted(tensors))[:200]}")
    main = decode(document["main"], main_arrays, {}, "its training state", converters())
    state = check_main(main)
    classes, conv = env_classes(), converters()
    state["envs"] = [
        decode(tree, arrays, classes, f"env {k}", conv)
        for k, (tree, arrays) in enumerate(env_parts)
    ]
    state["path"] = str(path)
    return state


def _number(value: Any, what: str, low: float, high: float, integer: bool = True) -> Any:
    kinds = (int,) if integer else (int, float)
    if (
        isinstance(value, bool)
        or not isinstance(value, kinds)
        or not (math.isfinite(value) and low <= value <= high)
    ):
        raise ValueError(
            f"{what} must be {'an integer' if integer else 'a number'} from {low:g} to {high:g}"
        )
    return value


def check_main(main: Any) -> dict[str, Any]:
    """The training state of a checkpoint, every field checked (types, ranges, keys)."""
    import numpy as np

    main = _exact_keys(main, MAIN_KEYS, "its training state")
    _number(main["timesteps"], "timesteps", 0, 10**12)
    _number(main["shaping_end"], "shaping_end", 1, 10**12)
    snapshots = main["snapshots"]
    if (
        not isinstance(snapshots, list)
        or len(snapshots) > 100
        or not all(
            isinstance(s, str) and s.endswith(".safetensors") and len(s) < 4096 for s in snapshots
        )
    ):
        raise ValueError("snapshots must be a list of at most 100 .safetensors paths")
    imitation = main["imitation"]
    if not isinstance(imitation, dict) or not all(
        isinstance(k, str) and isinstance(v, float) for k, v in imitation.items()
    ):
        raise ValueError("imitation must map names to numbers")
    flags = _exact_keys(main["flags"], set(RESUME_FLAGS), "flags")
    if not all(v is None or isinstance(v, (bool, int, float, str, list)) for v in flags.values()):
        raise ValueError("flags must be plain values")
    policy = main["policy"]
    if (
        not isinstance(policy, dict)
        or not policy
        or not all(
            isinstance(k, str) and isinstance(v, np.ndarray) and v.dtype == np.float32
            for k, v in policy.items()
        )
    ):
        raise ValueError("policy must map tensor names to float32 arrays")
    optimizer = _exact_keys(main["optimizer"], {"state", "param_groups"}, "optimizer")
    if not isinstance(optimizer["state"], dict) or not all(
        isinstance(i, int)
        and isinstance(s, dict)
        and all(
            isinstance(k, str) and isinstance(v, (np.ndarray, int, float)) for k, v in s.items()
        )
        for i, s in optimizer["state"].items()
    ):
        raise ValueError("optimizer state must map parameter numbers to tensors")
    groups = optimizer["param_groups"]
    if (
        not isinstance(groups, list)
        or not groups
        or not all(isinstance(g, dict) and isinstance(g.get("params"), list) for g in groups)
    ):
        raise ValueError("optimizer param_groups must be a list of groups with params")
    sb3 = _exact_keys(main["sb3"], SB3_KEYS, "sb3")
    _number(sb3["n_updates"], "sb3 n_updates", 0, 10**12)
    _number(sb3["episode_num"], "sb3 episode_num", 0, 10**12)
    _number(sb3["progress_remaining"], "sb3 progress_remaining", -1, 1, integer=False)
    for key in ("ep_info_buffer", "ep_success_buffer"):
        if not isinstance(sb3[key], list) or len(sb3[key]) > 10_000:
            raise ValueError(f"sb3 {key} must be a list")
    rng = _exact_keys(main["rng"], {"torch", "numpy", "python"}, "rng")
    if (
        not isinstance(rng["torch"], np.ndarray)
        or rng["torch"].dtype != np.uint8
        or rng["torch"].ndim != 1
    ):
        raise ValueError("rng torch must be a byte array")
    if not isinstance(rng["numpy"], tuple) or not isinstance(rng["python"], tuple):
        raise ValueError("rng numpy and python must be the states of their generators")
    for key in ("last_obs", "last_episode_starts"):
        if not isinstance(main[key], np.ndarray) or main[key].ndim not in (1, 2):
            raise ValueError(f"{key} must be an array")
    return dict(main)


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

    import numpy as np
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
        i: {k: torch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v for k, v in s.items()}
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
