"""The training envs mid-episode as a checkpoint stores them, and their checks on the way
back: a restored env must have the shape of a new env of the same settings, field by field."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.training.checkpoint import encode_env


def solo_env_state(env: Any) -> tuple[Any, list[np.ndarray]]:
    """One solo env (``ProgressShaping(Monitor(TrashSoloEnv))``) as plain data."""
    return encode_env(env)


def batched_env_state(venv: Any) -> list[tuple[Any, list[np.ndarray]]]:
    """The whole batch (its arrays, opponent seats and generators) as plain data."""
    return [encode_env(venv)]


def _attributes(value: Any) -> dict[str, Any]:
    from agents.training.plain import slot_names

    found = dict(vars(value)) if hasattr(value, "__dict__") else {}
    for slot in slot_names(type(value)):
        if hasattr(value, slot):
            found[slot] = getattr(value, slot)
    return found


def check_like(restored: Any, reference: Any, where: str, depth: int, rows: int) -> None:
    """``restored`` has ``reference``'s type and, down to ``depth`` objects deep, its
    attributes, of the same types (None stands for any); arrays of the same dtype and rank,
    and of the same shape where their first axis is the ``rows`` envs."""
    if restored is None or reference is None:
        return
    if type(restored) is not type(reference):
        raise ValueError(
            f"{where} is a {type(restored).__name__}, not a {type(reference).__name__}"
        )
    if isinstance(reference, np.ndarray):
        if (
            restored.dtype != reference.dtype
            or restored.ndim != reference.ndim
            or (reference.ndim and reference.shape[0] == rows and restored.shape != reference.shape)
        ):
            raise ValueError(
                f"{where} is a {restored.dtype} array of shape {restored.shape}, "
                f"not {reference.dtype} {reference.shape}"
            )
        return
    if depth <= 0 or isinstance(reference, (str, int, float, bool, list, tuple, dict)):
        return
    mine, theirs = _attributes(restored), _attributes(reference)
    missing = sorted(set(theirs) - set(mine))  # more is allowed: state gained by playing
    if missing:
        raise ValueError(f"{where} lacks attributes of this version's ({', '.join(missing)[:200]})")
    for name, value in theirs.items():
        check_like(mine[name], value, f"{where}.{name}", depth - 1, rows)


def restore_batched_env(saved: list[Any], config: Any, reference: Any) -> Any:
    """The checkpoint's batch, checked against ``reference`` (a new batch of the config)."""
    if len(saved) != 1:
        raise ValueError(
            f"--resume: the checkpoint holds {len(saved)} env entries, not the "
            "one batch of --vec batched"
        )
    venv = saved[0]
    check_like(venv, reference, "--resume: the checkpoint's batched env", 4, config.envs)
    if venv.num_envs != config.envs:
        raise ValueError(
            f"--resume: the checkpoint's batched envs do not match --envs {config.envs}"
        )
    if venv.core.rules != reference.core.rules:
        raise ValueError("--resume: the checkpoint's batched env plays other rules")
    if len(venv.core.opponent_specs) != len(venv.core.pool_kind) or any(
        p is not None and type(p).__name__ != "_Policy" for p in venv.core.policies
    ):
        raise ValueError("--resume: the checkpoint's batched env has a damaged opponent pool")
    return venv


def restore_solo_env(saved: Any, reference: Any, rank: int) -> Any:
    """One solo env of the checkpoint, checked against ``reference`` (a new one)."""
    where = f"--resume: the checkpoint's env {rank}"
    check_like(saved, reference, where, 5, -1)
    solo = saved.env.env
    if solo.rules != reference.env.env.rules:
        raise ValueError(f"{where} plays other rules")
    try:
        solo.game.check_invariants()
    except (AssertionError, ValueError, TypeError, IndexError, KeyError, AttributeError):
        raise ValueError(f"{where} holds a game that breaks the rules") from None
    return saved
