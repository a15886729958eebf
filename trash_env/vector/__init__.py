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

import contextlib
import importlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

try:
    import numba  # noqa: F401
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "trash_env.vector compiles its loops with numba: pip install 'trash-env[vector]'",
        name="numba",
    ) from None


@contextlib.contextmanager
def _numba_blas_probe_skipped() -> Iterator[None]:
    """Load numba's implementations without importing scipy.linalg.

    Why: on the first compiled call numba loads its implementations, and one of them imports
    ``scipy.linalg`` (0.1 to 0.2 s of a start-up, docs/benchmarks.md) only to learn whether
    ``np.convolve`` and ``np.correlate`` may call BLAS; no kernel here calls BLAS. While the
    engine loads, that one probe finds none (those two functions then use numba's own loop in
    this process); ``np.dot`` and ``np.linalg`` import scipy as usual when a function needs
    them. Nothing changes when scipy.linalg or numba's implementations are already loaded."""
    probe = "scipy.linalg.cython_blas"
    if probe in sys.modules or "numba.np.arraymath" in sys.modules:
        yield
        return
    sys.modules[probe] = None  # type: ignore[assignment]  # an import of it fails
    try:
        yield
    finally:
        if probe in sys.modules and sys.modules[probe] is None:
            del sys.modules[probe]


with _numba_blas_probe_skipped():
    from trash_env.vector.batch import VectorGame  # its first compiled call loads numba's parts

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
