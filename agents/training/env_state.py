"""The training envs mid-episode, as a checkpoint stores them."""

from __future__ import annotations

import pickle
from typing import Any


def solo_env_state(env: Any) -> bytes:
    return pickle.dumps(env, protocol=pickle.HIGHEST_PROTOCOL)


def restore_solo_env(state: bytes) -> Any:
    return pickle.loads(state)


def batched_env_state(venv: Any) -> list[bytes]:
    return [pickle.dumps(venv, protocol=pickle.HIGHEST_PROTOCOL)]


def restore_batched_env(state: list[bytes], num_envs: int) -> Any:
    from trash_env.vector import TrashVecEnv

    venv = pickle.loads(state[0])
    if not isinstance(venv, TrashVecEnv) or venv.num_envs != num_envs:
        raise ValueError(f"--resume: the checkpoint's batched envs do not match --envs {num_envs}")
    return venv
