"""A batched Trash engine: B games as numpy arrays, stepped by compiled loops (numba).

See ``docs/vector.md``. :class:`VectorGame` is the engine (game ``i`` of a batch replays as
``Game(rules, seed=batch.seeds[i])``); :class:`TrashVecEnv` a stable-baselines3 ``VecEnv`` of
``TrashSoloEnv`` games with the opponents inside the step, and :func:`make_vec_env` the function
``train.py`` calls; :func:`supports_opponents` tells whether a pool can play batched;
:class:`TrashVectorEnv` the same batch as a Gymnasium ``VectorEnv``.

Light import: ``import trash_env.vector`` loads the engine only. The envs' module
(:mod:`trash_env.vector.env`, which imports Gymnasium and, when installed, stable-baselines3
and with it torch) is imported on the first use of one of its names, so a user who only wants
``VectorGame`` does not pay for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

try:
    import numba  # noqa: F401
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "trash_env.vector compiles its loops with numba: pip install 'trash-env[vector]'",
        name="numba",
    ) from None

from trash_env.vector.batch import VectorGame

if TYPE_CHECKING:
    from trash_env.vector.env import (
        SoloBatch,
        TrashVecEnv,
        TrashVectorEnv,
        make_vec_env,
        supports_opponents,
    )

_ENV_NAMES = frozenset(
    ("SoloBatch", "TrashVecEnv", "TrashVectorEnv", "make_vec_env", "supports_opponents")
)

__all__ = [
    "SoloBatch",
    "TrashVecEnv",
    "TrashVectorEnv",
    "VectorGame",
    "make_vec_env",
    "supports_opponents",
]


def __getattr__(name: str) -> Any:
    """The envs' names, imported from :mod:`trash_env.vector.env` on first use (PEP 562)."""
    if name in _ENV_NAMES:
        value = getattr(importlib.import_module("trash_env.vector.env"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ENV_NAMES)
