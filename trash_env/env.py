"""The PettingZoo AEC environment of Trash: one engine game, agents ``player_0``..``player_{n-1}``.

========================  ===================================================================
Import                    ``from trash_env.env import env`` (or ``raw_env``; ``trash_env.env()``)
Actions                   Discrete
Parallel API              No (turn-based: ``is_parallelizable`` False)
Manual Control            No (a person plays at the terminal: ``python -m agents.play``)
Agents                    ``agents = ['player_0', ..., 'player_{n-1}']``
Number of agents          2 to 6 (``num_players``, default 2)
Action Shape              ``()``: one integer
Action Values             ``Discrete(13)``: 0-9 a layout slot (place a wild card there, or
                          swap the card in hand into its own slot), 10 draw from the stock,
                          11 take the discard top, 12 decline the swap
Observation Shape         ``{"observation": (153 + 44 (n - 2),), "action_mask": (13,)}``;
                          with ``observation="pairs"`` 108 more (261 for two players),
                          with ``"fits"`` 110 more
Observation Values        ``observation`` float32 in [0, 1]; ``action_mask`` int8 0/1
State Shape               ``(467 + 194 (n - 2),)`` float32 in [0, 1] (``state()``: hidden cards too)
Arguments                 every field of :class:`trash_env.rules.Rules`, ``render_mode``,
                          ``round_rewards``, ``observation`` (below and docs/environment.md)
Version history           ``trash_v0`` (0.1.0, 2026-12-02): the first release; observation
                          layout ``OBS_VERSION`` 1 (:mod:`trash_env.observation`)
========================  ===================================================================

``raw_env(**options)`` is the bare environment; ``env(**options)`` wraps it like PettingZoo's
classic games (illegal actions end the game with reward -1 for the offender, actions are
bounds-checked, call order is enforced). Options are every field of
:class:`trash_env.rules.Rules` plus ``render_mode``, ``round_rewards`` and ``observation``
(``"plain"``, or ``"pairs"`` or ``"fits"``: :mod:`trash_env.pairs` appended).

Why it looks the way it does:

- The engine stops only at real decisions, so every agent step is one engine decision; a
  ``CALL`` decision (``call_trash`` option) is answered by the env with ``CALL_TRASH`` at once.
  Agents always remember to call; only a human UI plays the call itself (on the engine).
- Observations come from :mod:`trash_env.observation` (public information only) and are cached
  per agent and env step: ``last()`` and ``observe()`` may be called many times per step. The
  returned arrays are fresh per step, so storing them is safe; do not write into them.
- Rewards are zero-sum. At the game's end every agent gets ``Game.returns()``. With
  ``round_rewards=True`` every finished deal also pays the players who shrank in that deal
  their share of +1 in the same formula (``Game.shares_to_returns``); the deal that ends the
  game pays its deal reward and then the game reward on top. Each step's rewards sum to zero.
- Game end: terminations all True (truncations all True at ``max_turns``, reward 0), then the
  agents are removed one by one by dead steps with action ``None`` (PettingZoo's pattern).
  A step after that raises :class:`GameOverError` (PettingZoo's wrapper only warns).
- Infos keep the same keys, types and shapes on every step (``placing`` int, 0 until the end;
  ``winners`` an int8 mask over the seats; ``rounds_won``; ``truncated``): libraries that stack
  infos into arrays (Tianshou's buffer) take them as they are.
- Actions are integers, strictly: ``env()`` refuses bools, floats, strings, arrays and
  out-of-range values with :class:`InvalidActionError` instead of PettingZoo's bare assertion
  (which also takes ``True`` as 1).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from trash_env import actions
from trash_env.engine import NUM_ACTIONS, Game
from trash_env.match import Match, final_info
from trash_env.observation import (
    action_mask,
    encode_observation,
    encode_state,
    state_size,
)
from trash_env.pairs import check_observation, extend, observation_width
from trash_env.reward import ILLEGAL_REWARD
from trash_env.rules import Rules
from trash_env.seeding import check_reset_options, check_seed

RENDER_MODES = ("ansi", "human", "rgb_array")
# pettingzoo.test.api_test and parallel_api_test call reset(seed=0, options={"options": 1}) to
# check that reset takes ``options``; that exact dict is let through, every other key refused.
PETTINGZOO_OPTIONS_PROBE = {"options": 1}
ENV_OPTIONS = ("render_mode", "round_rewards", "observation")


def env(**options: Any) -> AECEnv:
    """The Trash AEC environment wrapped like PettingZoo's classic games: illegal actions end
    the game (reward -1 for the offender), actions are bounds-checked, call order enforced."""
    wrapped: AECEnv = raw_env(**options)
    wrapped = _TerminateIllegal(wrapped, illegal_reward=ILLEGAL_REWARD)
    wrapped = _AssertOutOfBounds(wrapped)
    return _OrderEnforcing(wrapped)


# PettingZoo's wrappers find ``agent_selection``, ``terminations`` and the like through a
# ``__getattr__`` per wrapper layer, many times per step: together more than playing the step
# (docs/benchmarks-history.md). These subclasses of the very same wrappers (same behaviour, same
# ``isinstance``) read those attributes from the bare env directly.
_FORWARDED = (
    "agent_selection",
    "agents",
    "rewards",
    "terminations",
    "truncations",
    "infos",
    "_cumulative_rewards",
)


def _forward(name: str) -> property:
    # Before reset the bare env lacks these: the AttributeError makes Python fall back to the
    # wrapper's __getattr__, so OrderEnforcingWrapper still explains the misuse.
    def put(self: Any, value: Any) -> None:
        setattr(self._bare, name, value)

    return property(attrgetter(f"_bare.{name}"), put)  # attrgetter: a C-level read


class _DirectAttributes:
    _bare: AECEnv

    def _bind(self, inner: AECEnv) -> None:
        object.__setattr__(self, "_bare", inner.unwrapped)


for _name in _FORWARDED:
    setattr(_DirectAttributes, _name, _forward(_name))


class _TerminateIllegal(_DirectAttributes, wrappers.TerminateIllegalWrapper):
    def __init__(self, inner: AECEnv, illegal_reward: float) -> None:
        self._bind(inner)
        super().__init__(inner, illegal_reward)


_FAST_INTS = frozenset({int, np.int64, np.int32, np.intp, np.int16, np.int8, np.uint8})


class InvalidActionError(ValueError, AssertionError):
    """An action outside the action space given to ``env()``: not an integer 0..12 (a bool, a
    float, a string, an array, ``None`` for a live agent) or out of range. It is a ValueError
    like ``raw_env``'s refusals and an AssertionError like PettingZoo's
    ``AssertOutOfBoundsWrapper`` (code that catches either keeps working)."""


def check_action(action: Any, agent: str, dead: bool) -> None:
    """Raise InvalidActionError unless ``action`` is an integer 0..12 (Python ``int`` or a
    numpy integer scalar, never a bool; :func:`trash_env.actions.check_action`), or ``None``
    for a finished (``dead``) agent."""
    if action is None:
        if dead:
            return
        raise InvalidActionError(
            f"action None of {agent} is not in the action space (None is only for a finished "
            "agent's dead step): "
            f"give an integer from 0 to {NUM_ACTIONS - 1} that its action_mask allows"
        )
    actions.check_action(action, NUM_ACTIONS - 1, f" of {agent}", InvalidActionError)


class GameOverError(RuntimeError):
    """``step()`` after the game ended and every agent took its dead step (``env.agents`` is
    empty). PettingZoo's order wrapper only warns and drops the action; an action that goes
    nowhere is a bug in the caller's loop, so it is refused like ``TrashSoloEnv.step`` after
    the episode."""

    def __init__(self) -> None:
        super().__init__(
            "step() after the game ended: every agent is done and env.agents is empty; call "
            "reset() to deal a new game"
        )


class _AssertOutOfBounds(_DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's bounds check, stricter: ``Discrete(13).contains`` takes ``True`` as 1 and
    0-d integer arrays as their value; here only int and numpy integer scalars pass, and a
    refusal names the action (InvalidActionError, an AssertionError as PettingZoo's is)."""

    def __init__(self, inner: AECEnv) -> None:
        self._bind(inner)
        super().__init__(inner)

    def step(self, action: Any) -> None:
        # Fast path for an int or numpy integer scalar in range (what masks sampled with numpy
        # give); all else gets the full check.
        if not (type(action) in _FAST_INTS and 0 <= action < NUM_ACTIONS):
            agent = self._bare.agent_selection
            dead = self._bare.terminations[agent] or self._bare.truncations[agent]
            check_action(action, agent, dead)
        self.env.step(action)


class _OrderEnforcing(_DirectAttributes, wrappers.OrderEnforcingWrapper):
    """The outer wrapper. After reset, ``observe`` asks the TerminateIllegal layer directly
    (its own public ``observe``, which keeps the mask it checks the next action against) and
    ``last`` reads the bare env's dicts, instead of three wrapper layers of Python calls that
    cost as much as the engine's step (docs/benchmarks-history.md); ``step`` goes down PettingZoo's
    chain, which keeps its own bookkeeping. Only public methods of the wrappers are called."""

    def __init__(self, inner: AECEnv) -> None:
        self._bind(inner)
        super().__init__(inner)
        layer = inner
        while not isinstance(layer, _TerminateIllegal):
            layer = layer.env
        object.__setattr__(self, "_illegal_layer", layer)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        if not self._has_reset:
            return super().observe(agent)  # PettingZoo's error
        return self._illegal_layer.observe(agent)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's error
        bare = self._bare
        agent = bare.agent_selection
        assert agent is not None
        return (
            self.observe(agent) if observe else None,
            bare._cumulative_rewards[agent],
            bare.terminations[agent],
            bare.truncations[agent],
            bare.infos[agent],
        )

    def step(self, action: Any) -> None:
        if self._has_reset and not self._bare.agents:
            raise GameOverError()
        super().step(action)

    def __str__(self) -> str:
        return str(self.env)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention for the bare env
    """The bare Trash AEC environment (no wrappers): illegal actions raise ``ValueError``.

    Args:
        render_mode: ``None``, ``"ansi"`` (``render()`` returns text), ``"human"`` (prints the
            text after every step) or ``"rgb_array"`` (``render()`` returns an image).
        round_rewards: also reward every finished deal (see the module docstring).
        observation: ``"plain"`` (the default, :mod:`trash_env.observation`), ``"pairs"``:
            the same vector with the 108 products of :mod:`trash_env.pairs` appended, or
            ``"fits"``: those and the two fit entries of :mod:`trash_env.pairs`.
        **options: every field of :class:`trash_env.rules.Rules` (unknown names raise).

    Attributes:
        rules: the rules of every game this env plays.
        game: the running :class:`trash_env.engine.Game` (after ``reset``). It holds hidden
            cards: give agents observations, never the game.
    """

    metadata = {
        "name": "trash_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        round_rewards: bool = False,
        observation: str = "plain",
        **options: Any,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}, "
                f"got {render_mode!r}"
            )
        if not isinstance(round_rewards, (bool, np.bool_)):
            raise ValueError(f"round_rewards must be False or True, got {round_rewards!r}")
        self.observation = check_observation(observation)
        unknown = sorted(set(options) - set(Rules.option_names()))
        if unknown:
            raise ValueError(
                f"unknown option(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(ENV_OPTIONS + Rules.option_names())}"
            )
        self.rules = Rules.from_options(**options)
        self.render_mode = render_mode
        self.round_rewards = bool(round_rewards)
        n = self.rules.num_players
        self.possible_agents = [f"player_{p}" for p in range(n)]
        self._index = {agent: p for p, agent in enumerate(self.possible_agents)}
        # The agents' observation spaces are identical: one object serves them all (a Box
        # holds its bounds as arrays; docs/benchmarks-history.md). Action spaces are tiny and
        # stay per agent.
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    0.0, 1.0, (observation_width(n, self.observation),), np.float32
                ),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (state_size(n),), np.float32)
        # None until reset(), which every other method follows (env()'s OrderEnforcing says
        # so): typed as what they are once playing.
        self.game: Game = None  # type: ignore[assignment]
        self._rng = np.random.default_rng()
        self._steps = 0  # env steps since reset: the observation cache key
        self._obs_cache: dict[str, tuple[int, dict[str, np.ndarray]]] = {}
        self._match: Match = None  # type: ignore[assignment]
        self._paid = False  # whether self.rewards holds a payment (most steps pay nobody)
        self._last_events = 0  # index in game.events where the last step's events begin

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        self._seat(agent)
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        self._seat(agent)
        return self.action_spaces[agent]

    def _seat(self, agent: str) -> int:
        """The seat of ``agent``; ``ValueError`` naming this env's agents for another name."""
        seat = self._index.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(
                f"unknown agent {agent!r}: this env's agents are {', '.join(self.possible_agents)}"
            )
        return seat

    # ------------------------------------------------------------------ AEC API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``seed`` reseeds the env's generator; without it the next game
        follows from the generator's state (a fresh env draws its seed from the OS).
        ``options`` takes no keys (the rules are fixed at construction): any is refused, except
        the one dict PettingZoo's own API tests pass to see that ``reset`` takes the argument."""
        if options != PETTINGZOO_OPTIONS_PROBE:
            check_reset_options(options, ())
        if seed is not None:
            self._rng = np.random.default_rng(check_seed(seed))
        self.game = Game(self.rules, seed=int(self._rng.integers(2**63)))
        # Every seat decides outside the match (the caller's agents): it answers the call
        # and assembles the payments (the deals', then the game's).
        self._match = Match(self.game, round_rewards=self.round_rewards)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._info_deal = -1  # the deal the infos' rounds_won were read at
        self._set_live_infos()
        self._steps = 0
        self._obs_cache = {}
        self._paid = False
        self._last_events = 0
        self._settle()
        self._accumulate_rewards()
        if self.game.done:  # only a deal won before any decision (e.g. start_size=1)
            self._deads_step_first()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        cached = self._obs_cache.get(agent)
        if cached is not None and cached[0] == self._steps:
            return cached[1]
        p = self._seat(agent)
        vector = extend(encode_observation(self.game, p), self.game.num_players, self.observation)
        obs = {
            "observation": vector,
            "action_mask": action_mask(self.game, p),
        }
        self._obs_cache[agent] = (self._steps, obs)
        return obs

    def state(self) -> np.ndarray:
        """The full state (``encode_state``: includes hidden cards), for centralised critics."""
        return encode_state(self.game)

    def step(self, action: Any) -> None:
        if not self.agents and self.game is not None:
            raise GameOverError()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self.game
        mark = len(game.events)
        game.step(action)  # raises ValueError naming the legal actions if illegal (or no int)
        self._last_events = mark
        self._steps += 1
        self._cumulative_rewards[agent] = 0.0
        if self._paid:  # rewards are per step: clear the last payment
            self._clear_rewards()
            self._paid = False
        self._settle()
        if self._paid:
            self._accumulate_rewards()
        if game.done:
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            from gymnasium import logger

            logger.warn("render() called without a render_mode; pass render_mode to the env")
            return None
        from trash_env import render as table

        args = (self.game, self.possible_agents, self._last_events)
        if self.render_mode == "rgb_array":
            return table.render_image(*args)
        text = table.render_text(*args)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ internals

    def _settle(self) -> None:
        """After the engine moved: answer calls, pay finished deals, end or pass the turn."""
        game = self.game
        paid = self._match.settle()  # the deals' and the game's payments (Match's docstring)
        if paid is not None:
            self._pay(paid)
        if game.deal_number != self._info_deal and not game.done:
            self._set_live_infos()  # a deal ended: rounds_won changed
        if game.done:
            if game.truncated:
                self.truncations = dict.fromkeys(self.agents, True)
            else:
                self.terminations = dict.fromkeys(self.agents, True)
            self._set_final_infos()
        self.agent_selection = self.possible_agents[game.current]

    def _pay(self, returns: list[float]) -> None:
        self._paid = True
        for p, agent in enumerate(self.possible_agents):
            self.rewards[agent] += returns[p]

    def _set_live_infos(self) -> None:
        """Infos while the game runs: the keys, types and shapes of the final infos (see
        ``_set_final_infos``), with placing 0 and no winners. New dicts, never mutated later:
        a buffer may keep them. The all-zero winner mask is shared and read-only."""
        game = self.game
        self._info_deal = game.deal_number
        no_winners = np.zeros(len(self.possible_agents), np.int8)
        no_winners.flags.writeable = False
        self.infos = {
            agent: {
                "placing": 0,
                "winners": no_winners,
                "rounds_won": game.rounds_won[p],
                "truncated": False,
            }
            for p, agent in enumerate(self.possible_agents)
        }

    def _set_final_infos(self) -> None:
        """The same keys as every step's infos, so that batching libraries (Tianshou's buffer)
        stack them: ``placing`` an int (1 = won; 0 if truncated), ``winners`` an int8 mask over
        the seats, ``rounds_won`` an int, ``truncated`` a bool."""
        for p, agent in enumerate(self.possible_agents):
            info = final_info(self.game, p)
            info["winners"].flags.writeable = False
            self.infos[agent] = info
