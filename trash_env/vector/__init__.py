"""A batched Trash engine: B games as numpy arrays, stepped by compiled loops (numba).

See ``docs/vector.md``. :class:`VectorGame` is the engine; :class:`TrashVecEnv` a
stable-baselines3 ``VecEnv`` (and :func:`make_vec_env` the function ``train.py`` calls);
:class:`TrashVectorEnv` a Gymnasium ``VectorEnv``.
"""

from trash_env.vector.batch import VectorGame

__all__ = ["VectorGame"]
