"""One check for every ``seed`` a user passes (envs, agents): numpy's generators take any
integer 0 or more, and their own refusals ("expected non-negative integer") name no option."""

from __future__ import annotations

import numpy as np


def check_seed(seed: object, name: str = "seed") -> int | None:
    """``None``, or ``seed`` as a Python ``int``: an integer 0 or more, Python's or numpy's
    (bools are not integers). ``ValueError`` naming ``name`` and the allowed values otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name} must be None or an integer 0 or more, got {seed!r}")
    return int(seed)
