"""The checked mode of the JAX env: :func:`checked` wraps a :class:`TrashEnv` so that every
action and player id is checked on the host, as the PettingZoo env checks them, before the
compiled step sees it. docs/jax.md recommends it wherever actions come from outside JAX.

Why a separate mode: under ``jax.jit`` a step sees its arguments only after JAX converted
them, and without ``jax_enable_x64`` JAX narrows a 64-bit integer to int32 at the call
(``np.int64(2**40 + 10)`` arrives as 10), so no check inside the step can tell. Here the
concrete values are checked first: an action must be an integer (not a bool, a float or a
string) from 0 to 12, one per game; a player id an integer seat of the table. A refusal is a
``ValueError`` naming what is allowed, as ``trash_env.env()``'s refusals are. An
in-range action that the mask does not allow ends the game with the offender's loss (Pgx's
rule and ``env()``'s).
"""

from __future__ import annotations

import reprlib
from typing import Any

import jax
import numpy as np

from trash_env.actions import holds_bool
from trash_env.engine import NUM_ACTIONS
from trash_env.jax_env.env import State, TrashEnv


def _integers(value: Any, shape: tuple[int, ...], top: int, name: str, what: str) -> np.ndarray:
    """``value`` as an int64 array of ``shape`` from 0 to ``top``; ``ValueError`` else."""
    if isinstance(value, jax.core.Tracer):
        raise ValueError(
            f"the checked env takes concrete {name}s, not traced ones: call it outside jax.jit "
            "(inside, use the env's own step and observe)"
        )
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raw = np.asarray(object())
    if raw.dtype.kind not in "iu" or holds_bool(value) or isinstance(value, (bool, np.bool_)):
        raise ValueError(
            f"{name} {reprlib.repr(value)} is not an integer (dtype {raw.dtype}): {what}"
        )
    if raw.shape != shape:
        raise ValueError(
            f"{name} must have the shape {shape} (one per game of the state), got {raw.shape}"
        )
    if raw.size and not (raw.min() >= 0 and raw.max() <= top):
        bad = raw[(raw < 0) | (raw > top)][:5].tolist()
        raise ValueError(f"{name} {bad} out of range: {what}")
    return raw.astype(np.int64)


class CheckedEnv:
    """A :class:`TrashEnv` whose ``step`` and ``observe`` check their inputs on the host and
    then run the env's compiled functions (one game, or a batch made with ``jax.vmap``: the
    state's ``current_player`` shape tells which). Everything else is the env's."""

    def __init__(self, env: TrashEnv) -> None:
        self.env = env
        self._step = jax.jit(env.step)
        self._steps = jax.jit(jax.vmap(env.step))
        self._keyed_steps = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0)))
        self._observe = jax.jit(env.observe)
        self._observes = jax.jit(jax.vmap(env.observe))
        self._init = jax.jit(env.init)
        self._inits = jax.jit(jax.vmap(env.init))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def init(self, key: jax.Array) -> State:
        """``env.init(key)``, compiled (a batch of keys: ``jax.vmap`` of it)."""
        single = key.ndim == (0 if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key) else 1)
        return (self._init if single else self._inits)(key)

    def step(self, state: State, action: Any, key: jax.Array | None = None) -> State:
        """``env.step`` once ``action`` is checked: integers from 0 to 12, one per game."""
        shape = tuple(state.current_player.shape)
        space = (
            f"an action is an integer from 0 to {NUM_ACTIONS - 1} (int or numpy integer; bools, "
            "floats and strings are refused)"
        )
        actions = _integers(action, shape, NUM_ACTIONS - 1, "action", space)
        if not shape:
            return self._step(state, actions, key)
        if key is None:
            return self._steps(state, actions)
        return self._keyed_steps(state, actions, key)

    def observe(self, state: State, player_id: Any = None) -> jax.Array:
        """``env.observe`` once ``player_id`` is checked: a seat of the table per game."""
        shape = tuple(state.current_player.shape)
        if player_id is None:
            return (self._observes if shape else self._observe)(state)
        n = self.env.num_players
        seat = f"a player id is an integer from 0 to {n - 1} (the table's seats)"
        players = _integers(player_id, shape, n - 1, "player_id", seat)
        return (self._observes if shape else self._observe)(state, players)


def checked(env: TrashEnv) -> CheckedEnv:
    """``env`` in the checked mode (module docstring): the mode docs/jax.md recommends
    wherever actions or player ids come from outside JAX."""
    return CheckedEnv(env)
