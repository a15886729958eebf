"""The progress of a deal, ``phi``, that the optional shaped reward pays (agents/training/shaping.py
explains the shaping): one formula and one coefficient check, used by ``agents.training.shaping``'s
wrapper for ``TrashSoloEnv`` and by the batched env (:mod:`trash_env.vector.env`), which
trash_env may not import from agents."""

from __future__ import annotations

import numpy as np


def check_coef(coef: float) -> float:
    """The shaping coefficient, checked: a finite float from 0 to 10."""
    if isinstance(coef, bool) or not isinstance(coef, (int, float, np.floating, np.integer)):
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    value = float(coef)
    if not 0.0 <= value <= 10.0:  # also refuses NaN
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    return value


def progress_potential(sizes: np.ndarray, down: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """phi per game: the learner's face-up fraction minus the opponents' mean.

    ``sizes`` and ``down`` are ``(B, n)`` (layout sizes, face-down slots left), ``seats`` the
    ``(B,)`` learner seats."""
    sizes = np.asarray(sizes, np.float64)
    up = (sizes - np.asarray(down, np.float64)) / np.maximum(sizes, 1.0)
    n = up.shape[1]
    rows = np.arange(up.shape[0])
    mine = up[rows, seats]
    others = (up.sum(axis=1) - mine) / max(n - 1, 1)
    return mine - others
