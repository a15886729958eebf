"""A batched Trash engine: B games as numpy arrays, stepped by compiled loops (numba).

See ``docs/vector.md``. :class:`VectorGame` is the engine (game ``i`` of a batch replays as
``Game(rules, seed=batch.seeds[i])``); :class:`TrashVecEnv` a stable-baselines3 ``VecEnv`` of
``TrashSoloEnv`` games with the opponents inside the step, and :func:`make_vec_env` the function
``train.py`` calls; :func:`supports_opponents` tells whether a pool can play batched;
:class:`TrashVectorEnv` the same batch as a Gymnasium ``VectorEnv``.
"""

try:
    import numba  # noqa: F401
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "trash_env.vector compiles its loops with numba: pip install 'trash-env[vector]'",
        name="numba",
    ) from None

from trash_env.vector.batch import VectorGame  # noqa: E402
from trash_env.vector.env import (
    SoloBatch,
    TrashVecEnv,
    TrashVectorEnv,
    make_vec_env,
    supports_opponents,
)

__all__ = [
    "SoloBatch",
    "TrashVecEnv",
    "TrashVectorEnv",
    "VectorGame",
    "make_vec_env",
    "supports_opponents",
]
