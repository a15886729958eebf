"""One check for every ``seed`` a user passes (envs, agents): numpy's generators take any
integer 0 or more, and their own refusals ("expected non-negative integer") name no option.
And one for the envs' ``reset(options=...)``: PettingZoo and Gymnasium pass any dict through,
so a misspelt option would otherwise be ignored without a word."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np


def check_seed(seed: object, name: str = "seed") -> int | None:
    """``None``, or ``seed`` as a Python ``int``: an integer 0 or more, Python's or numpy's
    (bools are not integers). ``ValueError`` naming ``name`` and the allowed values otherwise."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name} must be None or an integer 0 or more, got {seed!r}")
    return int(seed)


def check_reset_options(options: object, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    """``reset``'s ``options`` (``None``: none) as a mapping whose keys are all in ``allowed``;
    ``ValueError`` naming the unknown keys and the allowed ones otherwise."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"reset options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(map(str, set(options) - set(allowed)))
    if unknown:
        named = ", ".join(allowed) if allowed else "none (the rules are fixed when the env is made)"
        raise ValueError(f"reset options: unknown {', '.join(unknown)}; allowed: {named}")
    return options
