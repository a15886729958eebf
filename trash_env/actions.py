"""The one check of an action's value and type, for the engine and every adapter.

Why: an action is an integer; ``True`` is not action 1 and ``10.0`` is not action 10. The
engine, the AEC env, the single-agent env and the batched engine and envs all refuse the same
values with the same words, so the check lives here once: :func:`integer_value` for one
action (whether it is an integer at all), :func:`check_action` for one action of an action
space, :func:`check_actions` for a batch of them. Whether an in-range action is legal *now*
is the engine's question (``Game.refusal`` names the legal actions).
"""

from __future__ import annotations

import numbers
import reprlib

import numpy as np

_BOOL_TYPES = (bool, np.bool_)


def integer_value(value: object) -> int | None:
    """``value`` as a Python int if it is an integer of any kind (numpy's too) and not a bool,
    else None: ``True`` is not slot 2 and ``10.0`` not an action."""
    if isinstance(value, _BOOL_TYPES) or not isinstance(value, numbers.Integral):
        return None
    return int(value)


def _space(top: int) -> str:
    return (
        f"action must be an integer from 0 to {top} (int or numpy integer; bools, floats, "
        "strings and arrays are refused)"
    )


def check_action(
    action: object, top: int, of: str = "", error: type[ValueError] = ValueError
) -> int:
    """``action`` as a Python int from 0 to ``top``; else ``error`` naming the action (``of``:
    whose, e.g. ``" of player_0"``) and the action space."""
    value = integer_value(action)
    if value is not None and 0 <= value <= top:
        return value
    problem = "out of range" if value is not None else f"a {type(action).__name__}, not an integer"
    raise error(f"action {action!r}{of} is not in the action space ({problem}): {_space(top)}")


def holds_bool(values: object) -> bool:
    """Whether a Python list or tuple holds a bool: ``np.asarray([True, 1])`` is an integer
    array, so the dtype alone does not tell. An array has one dtype: it costs nothing here."""
    # The set of element types is built in C and holds one or two types in practice.
    return isinstance(values, (list, tuple)) and any(
        issubclass(kind, _BOOL_TYPES) for kind in set(map(type, values))
    )


def check_actions(actions: object, size: int, top: int) -> np.ndarray:
    """``actions`` as int64 ``(size,)`` from 0 to ``top``, or ``ValueError`` naming the shape
    or range expected: floats are not truncated, bools are not actions and huge integers are
    refused before any cast can overflow."""
    raw = np.asarray(actions)
    if raw.dtype.kind not in "iu" or holds_bool(actions):
        got = "a bool inside a list" if raw.dtype.kind in "iu" else f"dtype {raw.dtype}"
        raise ValueError(
            f"actions must be integers from 0 to {top}, got {reprlib.repr(actions)} ({got})"
        )
    if raw.shape != (size,):
        raise ValueError(f"actions must have shape ({size},), got {raw.shape}")
    if raw.size and not (raw.min() >= 0 and raw.max() <= top):
        bad = raw[(raw < 0) | (raw > top)][:5].tolist()
        raise ValueError(f"actions must be integers from 0 to {top}, got {bad}")
    return raw.astype(np.int64)
