"""Trash on Pgx's API: ``make(**rules_options)`` returns an environment with Pgx's ``Env``
interface (``init``, ``step``, ``observe``, ``id``, ``version``, ``num_players``) over the
JAX engine (:mod:`trash_env.jax_env.engine`).

Where Pgx has a convention this env follows it: ``init(key)`` and ``step(state, action, key)``
are pure and batch with ``jax.vmap``; ``rewards`` are paid once, at the step that ends the
game (the engine's zero-sum ``returns()``); a finished state stays finished (steps on it change
nothing and pay zero) and its ``legal_action_mask`` is all True; an illegal action ends the
game at once with the offender's loss. The env answers the "Trash!" call for every player
(as trash_env's other envs do), so the 13 actions are those of ``Discrete(13)``.
"""

from __future__ import annotations

import dataclasses
import reprlib
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from trash_env.engine import NUM_ACTIONS
from trash_env.jax_env import engine as E
from trash_env.jax_env import rules as R
from trash_env.jax_env import threefry
from trash_env.jax_env.batching import where_needed
from trash_env.jax_env.observe import action_mask, observation, with_pairs
from trash_env.pairs import PAIRS_ONLY, check_observation, observation_width
from trash_env.rules import Rules

ENV_ID = "trash"
# A step ends about one game in a hundred: auto_reset deals the new ones in chunks of a 64th
# of the batch (batching.where_needed).
NEW_GAME_SHARE = 64
VERSION = "v0"
# An engine action no decision accepts (``E.step`` leaves the game as it is).
_REFUSED = 127


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class State:
    """Pgx's six public fields, its step counter and the game (private, as in Pgx)."""

    current_player: jax.Array  # int32: the player to act (the last actor once over)
    observation: jax.Array  # float32: the current player's observation
    rewards: jax.Array  # float32 (num_players,): paid at the step that ends the game
    terminated: jax.Array  # bool
    truncated: jax.Array  # bool: max_turns reached (no rewards)
    legal_action_mask: jax.Array  # bool (13,): all True once the game is over
    _step_count: jax.Array  # int32
    _game: E.Game

    env_id = ENV_ID

    def replace(self, **changes: Any) -> State:
        return dataclasses.replace(self, **changes)

    def to_svg(self, **_: Any) -> str:
        """A one-line text picture of the public table (Pgx's API test saves one)."""
        g = self._game  # one game or a batch: the arrays are shown as they are
        text = (
            f"Trash: to act {g.current.tolist()}, sizes {g.sizes.tolist()}, "
            f"face-down {g.face_down.tolist()}, stock {g.nstock.tolist()}"
        )
        return (
            '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="24">'
            f'<text x="4" y="16" font-size="12">{text}</text></svg>'
        )

    def save_svg(self, filename: str, **kwargs: Any) -> None:
        with open(filename, "w") as f:
            f.write(self.to_svg(**kwargs))


class TrashEnv:
    """Trash with Pgx's ``Env`` interface (see the module docstring). Build it with
    :func:`make`; every method is a pure function of its arguments. The rules travel in the
    state as arrays: ``jax.jit(env.step)`` compiles once per player count and observation
    kind, whatever the other options (:func:`init_state` and :func:`step_state` take them as
    arguments, to share one compilation between envs)."""

    def __init__(self, rules: Rules, observation: str = "plain") -> None:
        self.rules = rules
        self.observation_kind = check_observation(observation, PAIRS_ONLY)
        self.arrays = E.rules_arrays(rules)
        self._n = rules.num_players

    @property
    def id(self) -> str:
        return ENV_ID

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return self._n

    @property
    def num_actions(self) -> int:
        return NUM_ACTIONS

    @property
    def observation_shape(self) -> tuple[int, ...]:
        return (observation_width(self._n, self.observation_kind),)

    def init(self, key: jax.Array) -> State:
        """A new game dealt from ``key`` (first player, deal and later chance all from it)."""
        return init_state(key, self.arrays, self._n, self.observation_kind)

    def step(self, state: State, action: jax.Array, key: jax.Array | None = None) -> State:
        """One decision of the player to act. ``key``: the chance of this step (reshuffles,
        the next deal) draws from it; without one, from the key the game carries (so a game
        is a function of ``init``'s key and the actions). ``action``: one integer per game; a
        float, a bool or an array is refused (``ValueError``), one outside 0..12 is illegal
        and ends the game. Under ``jax.jit`` JAX narrows a 64-bit integer to int32 before the
        step sees it (docs/jax.md, "Inputs"): :func:`~trash_env.jax_env.checked` refuses it."""
        return step_state(state, action, key, self._n, self.observation_kind)

    def observe(self, state: State, player_id: jax.Array | None = None) -> jax.Array:
        """The observation of ``player_id`` (default: the player to act). A player id that is
        not an integer is refused (``ValueError``); one outside ``0..num_players-1`` gets an
        observation of NaN, never another seat's (:func:`~trash_env.jax_env.checked` refuses
        it instead)."""
        if player_id is None:
            return observe_game(state._game, state.current_player, self._n, self.observation_kind)
        player, seated = integer_input(player_id, self._n, "player_id")
        seen = observe_game(state._game, player, self._n, self.observation_kind)
        return jnp.where(seated, seen, jnp.nan)


def integer_input(value: Any, count: int, name: str) -> tuple[jax.Array, jax.Array]:
    """``value`` (an action or a player id, one per game) as an int32 in ``0..count-1`` and
    whether it was in that range, compared at its own width before any narrowing (an int64
    ``2**40 + 10`` is out of range, not 10). Not an integer scalar: ``ValueError``, at
    trace time for a traced one (its dtype and shape are known then)."""
    if isinstance(value, jax.core.Tracer):
        dtype, shape = value.dtype, value.shape
    else:
        try:
            concrete = np.asarray(value)
        except (TypeError, ValueError, OverflowError):
            concrete = np.asarray(object())
        dtype, shape = concrete.dtype, concrete.shape
        if dtype.kind in "iu" and shape == () and not isinstance(value, (bool, np.bool_)):
            number = int(concrete)
            ok = 0 <= number < count
            return jnp.int32(number if ok else 0), jnp.bool_(ok)
    if not (jnp.issubdtype(dtype, jnp.integer) and shape == ()):
        raise ValueError(
            f"{name} must be one integer per game (an int or an integer array's element), "
            f"got {reprlib.repr(value)} of dtype {dtype} and shape {shape}: floats and bools "
            "are not cast"
        )
    seated = (value >= 0) & (value < count)
    return jnp.where(seated, jnp.clip(value, 0, count - 1), 0).astype(jnp.int32), seated


def observe_game(g: E.Game, player: jax.Array, num_players: int, kind: str) -> jax.Array:
    """The ``kind`` observation (``plain`` or ``pairs``) of ``player``."""
    plain = observation(g, player)
    return with_pairs(plain, num_players) if kind == "pairs" else plain


def _state(g: E.Game, rewards: jax.Array, count: jax.Array, n: int, kind: str) -> State:
    mask = jnp.where(g.done, True, action_mask(g, g.current))
    return State(
        current_player=g.current.astype(jnp.int32),
        observation=observe_game(g, g.current, n, kind),
        rewards=rewards.astype(jnp.float32),
        terminated=g.done & ~g.truncated,
        truncated=g.truncated,
        legal_action_mask=mask,
        _step_count=jnp.asarray(count, jnp.int32),
        _game=g,
    )


def init_state(key: jax.Array, arrays: E.RulesArrays, num_players: int, kind: str) -> State:
    """``TrashEnv.init`` with the rules as arrays (``E.rules_arrays``)."""
    g = R.init(key, arrays, num_players, answer_calls=True)
    # A game can end before anyone decides (with start_size 1 or 2 the forced placements of
    # the first turns can win every round): it comes back terminated, its rewards paid here.
    return _state(g, E.returns(g), jnp.int32(0), num_players, kind)


def step_state(
    state: State, action: jax.Array, key: jax.Array | None, num_players: int, kind: str
) -> State:
    """``TrashEnv.step`` for ``num_players`` and observation ``kind``."""
    return _step(state, action, key, num_players, kind, None)


def step_and_reset(
    state: State, action: jax.Array, key: jax.Array, num_players: int, kind: str
) -> State:
    """``auto_reset(env.step, env.init)`` for ``num_players`` and observation ``kind``, the
    same states, with the new game dealt and played to its first decision inside the
    step's engine run (``engine.Restart``): one copy of the run to compile, not two."""
    over = state.terminated | state.truncated
    state = state.replace(
        terminated=state.terminated & ~over,
        truncated=state.truncated & ~over,
        rewards=jnp.where(over, 0.0, state.rewards).astype(state.rewards.dtype),
    )
    return _step(state, action, threefry.split_at(key, 0), num_players, kind, key)


def _step(
    state: State,
    action: jax.Array,
    key: jax.Array | None,
    num_players: int,
    kind: str,
    reset_key: jax.Array | None,
) -> State:
    """``step_state``; with ``reset_key`` (``step_and_reset``), where the step ends the game a
    new one from ``reset_key`` as ``auto_reset`` deals it, keeping the step's ``terminated``,
    ``truncated`` and ``rewards``."""
    n = num_players
    g = state._game
    if key is not None:
        g = g._replace(key=key)
    # An action outside 0..12 at its own width is illegal (an int64 2**40 + 10 too, which
    # int32 would read as 10); a float, a bool or an array is refused (integer_input).
    action, in_range = integer_input(action, NUM_ACTIONS, "action")
    over = state.terminated | state.truncated
    legal = state.legal_action_mask[action] & in_range
    ok = legal & ~over
    restart = None if reset_key is None else E.restart(~ok & ~over, reset_key, n)
    # Where the step does not play (a finished game, an illegal action) the engine gets an
    # action it refuses, so the game comes back unchanged and only the small fields below
    # are chosen (never the piles).
    moved, _, restart = E.step_and_restart(g, jnp.where(ok, action, _REFUSED), True, restart)
    if restart is None:
        ended_done, ended_truncated, ended_returns = moved.done, moved.truncated, E.returns(moved)
        count = state._step_count + jnp.where(over, 0, 1).astype(jnp.int32)
    else:  # the game as the step ended it, where a new game took its place
        again = restart.started > 0
        ended_done = jnp.where(again, restart.done, moved.done)
        ended_truncated = jnp.where(again, restart.truncated, moved.truncated)
        ended_returns = jnp.where(again, restart.returns, E.returns(moved))
        count = jnp.where(again, 0, state._step_count + jnp.where(over, 0, 1)).astype(jnp.int32)
    paid = jnp.where(g.done, 0.0, ended_returns)  # only the step that ends the game
    # Pgx's rule for an illegal action: the game ends at once with the offender's loss (-1;
    # the others share +1, zero-sum: ``returns()`` as if they had all won).
    penalty = jnp.where(jnp.arange(n) == state.current_player, -1.0, 1.0 / (n - 1))
    every = jnp.ones(NUM_ACTIONS, jnp.bool_)
    seen = action_mask(moved, moved.current)
    mask = jnp.where(
        ok, jnp.where(moved.done, True, seen), jnp.where(over, state.legal_action_mask, every)
    )
    if restart is not None:  # a new game's mask (the new games of a restart have a decision)
        mask = jnp.where(restart.started > 0, seen, mask)
    # Where the step does not play, ``moved`` is the game as it was: its player to act and
    # observation are the state's (no selection of the observation needed).
    return State(
        current_player=moved.current.astype(jnp.int32),
        observation=observe_game(moved, moved.current, n, kind),
        rewards=jnp.where(ok, paid, jnp.where(over, 0.0, penalty)).astype(jnp.float32),
        terminated=jnp.where(ok, ended_done & ~ended_truncated, state.terminated | ~over),
        truncated=jnp.where(ok, ended_truncated, state.truncated),
        legal_action_mask=mask,
        _step_count=count,
        _game=moved._replace(key=jnp.where(over, state._game.key, moved.key)),
    )


def make(observation: str = "plain", **rules_options: object) -> TrashEnv:
    """Trash with Pgx's API for the rules ``rules_options`` (every :class:`Rules` option;
    ``observation``: ``"plain"`` or ``"pairs"``). Bad options raise ``ValueError`` here,
    never inside a trace."""
    return TrashEnv(Rules.from_options(**rules_options), observation)


def _own_env(step_fn: Callable[..., State], init_fn: Callable[..., State]) -> TrashEnv | None:
    """The env whose own ``step`` and ``init`` these are, if they are one env's."""
    env = getattr(step_fn, "__self__", None)
    own = (
        getattr(step_fn, "__func__", None) is TrashEnv.step
        and getattr(init_fn, "__self__", None) is env
        and getattr(init_fn, "__func__", None) is TrashEnv.init
    )
    return env if own and isinstance(env, TrashEnv) else None


def auto_reset(
    step_fn: Callable[..., State], init_fn: Callable[[jax.Array], State]
) -> Callable[..., State]:
    """Pgx's ``auto_reset``: a step that starts a new game (``init_fn`` from a split of
    ``key``) where the step ends one, keeping that step's ``terminated``, ``truncated`` and
    ``rewards``. A new game that ends before its first decision (``init_state``) is dealt
    again from a further split of the key, so every game it starts has a decision. Under
    ``jax.vmap`` only the games that ended are dealt anew (the others pay nothing for it).
    For this env's own ``step`` and ``init`` (``auto_reset(env.step, env.init)``) it is
    :func:`step_and_reset`: the same states, the new game played inside the step's run."""
    env = _own_env(step_fn, init_fn)
    if env is not None:
        n, kind = env.num_players, env.observation_kind

        def fused(state: State, action: jax.Array, key: jax.Array) -> State:
            return step_and_reset(state, action, key, n, kind)

        return fused

    def fresh_game(key: jax.Array) -> State:
        def over(c: tuple[State, jax.Array]) -> jax.Array:
            return c[0].terminated | c[0].truncated

        def again(c: tuple[State, jax.Array]) -> tuple[State, jax.Array]:
            key, sub = threefry.split(c[1])
            return init_fn(sub), key

        return jax.lax.while_loop(over, again, (init_fn(key), key))[0]

    def restart(carry: tuple[State, jax.Array]) -> tuple[State, jax.Array]:
        state, key = carry
        fresh = fresh_game(threefry.split_at(key, 1)).replace(
            terminated=state.terminated, truncated=state.truncated, rewards=state.rewards
        )
        return fresh, key

    def wrapped(state: State, action: jax.Array, key: jax.Array) -> State:
        over = state.terminated | state.truncated
        state = state.replace(
            terminated=state.terminated & ~over,
            truncated=state.truncated & ~over,
            rewards=jnp.where(over, 0.0, state.rewards).astype(state.rewards.dtype),
        )
        # Pgx's keys: the step draws from split(key)[0], the new game from split(key)[1],
        # which is hashed only for the games that ended (where_needed, below).
        state = step_fn(state, action, threefry.split_at(key, 0))
        # Under vmap the new games are dealt for the games that ended only (where_needed).
        return where_needed(
            state.terminated | state.truncated, restart, (state, key), NEW_GAME_SHARE
        )[0]

    return wrapped


try:  # Pgx's Env as a virtual base, where Pgx is installed: isinstance and issubclass hold
    import pgx

    pgx.Env.register(TrashEnv)
except ImportError:  # pragma: no cover - pgx is optional
    pass
