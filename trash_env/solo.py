"""A single-agent Gymnasium view of Trash: one learner seat against opponents that act inside
``step()``.

Why it exists: single-agent RL libraries (stable-baselines3, sb3-contrib's MaskablePPO) train one
policy on a ``gymnasium.Env``. This env plays the engine directly (no PettingZoo layer) and asks
the opponents, :class:`trash_env.agent.Agent` objects (given, or built from spec strings such as
``random``, ``greedy``, a model's ``.safetensors`` by :func:`trash_env.agent.make_agent`), for
their moves between the learner's decisions.

- Observation: ``Box(0, 1, (observation_size(n),), float32)``, the learner's
  :func:`trash_env.observation.encode_observation` (public information only, seats ordered from
  the learner); with ``observation="pairs"`` the 108 products of :mod:`trash_env.pairs` follow
  (``"fits"``: those and two fit entries).
  The action mask is not in the observation: ``action_masks()`` returns it (the
  sb3-contrib convention), and ``info["action_mask"]`` holds it too.
- Actions: ``Discrete(13)`` as in the AEC env, an ``int`` or numpy integer scalar; anything
  else (a bool, a float, a string, an array, out of range) raises ValueError whatever
  ``illegal`` says. An illegal action ends the episode with reward -1 (option
  ``illegal="raise"`` raises instead); masked learners never send one.
- Infos have the same keys, types and shapes on every step (see ``_info``), so batching
  libraries stack them. A ``CALL``
  decision (``call_trash``) is answered with ``CALL_TRASH`` for every seat, as the AEC env does.
- Episodes: the learner's seat and, per opponent seat, one entry of the opponent pool are drawn
  per episode from the env's seeded generator. The episode ends with the game (or the deal, with
  ``episode="round"``), whoever ends it; the final step's reward is the learner's share of
  ``Game.returns()`` (zero-sum: +1/-1 with two players, 0 when truncated at ``max_turns``).
  ``round_rewards=True`` also pays each finished deal (``Game.shares_to_returns``), as the AEC
  env does. A deal that is decided before the learner's first decision (possible only with tiny
  layouts) is re-dealt in ``reset``: the learner has nothing to learn from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from trash_env.actions import check_action
from trash_env.engine import NUM_ACTIONS, Game
from trash_env.match import Match, final_info
from trash_env.observation import OBS_VERSION, action_mask, encode_observation
from trash_env.opponents import OpponentEntry, OpponentPool, build
from trash_env.pairs import check_observation, extend, observation_width
from trash_env.reward import add_payments, learner_reward
from trash_env.rules import Rules
from trash_env.seeding import check_reset_options, check_seed

MAX_REDEALS = 1000
ILLEGAL = ("lose", "raise")


def solo_rules(seat: object, round_rewards: object, options: dict[str, Any]) -> Rules:
    """The rules of a learner-seat env (this one and the batched ``trash_env.vector`` ones),
    after checking the two options they add to ``Rules``: ``seat`` and ``round_rewards``
    (numpy integers and bools are taken as Python's)."""
    rules = Rules.from_options(**options)
    check_seat(seat, rules.num_players, "seat")
    if not isinstance(round_rewards, (bool, np.bool_)):
        raise ValueError(f"round_rewards must be False or True, got {round_rewards!r}")
    return rules


def check_seat(seat: object, num_players: int, name: str) -> int | None:
    """``None``, or ``seat`` as a Python ``int`` from 0 to ``num_players - 1`` (a numpy
    integer too; not a bool); ``ValueError`` naming ``name`` and the allowed values otherwise."""
    if seat is None:
        return None
    if (
        isinstance(seat, (bool, np.bool_))
        or not isinstance(seat, (int, np.integer))
        or not 0 <= seat < num_players
    ):
        raise ValueError(
            f"{name} must be None or an integer from 0 to {num_players - 1}, got {seat!r}"
        )
    return int(seat)


class TrashSoloEnv(gym.Env):
    """One learner seat of Trash against a table of opponents.

    Args:
        opponents: the opponent pool: spec strings (see :func:`trash_env.agent.make_agent`)
            and/or ready :class:`trash_env.agent.Agent` objects. Each opponent seat draws one
            entry per episode, uniformly (repeat an entry to weight it). Default ``("random",)``.
        seat: the learner's seat, or ``None`` to draw it per episode.
        round_rewards: also pay every finished deal (see the module docstring).
        illegal: what an illegal action does: ``"lose"`` ends the episode with reward -1 (the
            learner forfeits, as in the AEC env's wrapper; masked learners never get there) or
            ``"raise"`` raises ``ValueError`` naming the legal actions.
        render_mode: ``None``, ``"ansi"`` (``render()`` returns the table as text), ``"human"``
            (prints it) or ``"rgb_array"`` (a picture; SB3's ``make_vec_env`` asks for it).
        observation: ``"plain"`` (the default, :mod:`trash_env.observation`), ``"pairs"``:
            the same vector with the 108 products of :mod:`trash_env.pairs` appended, or
            ``"fits"``: those and the two fit entries of :mod:`trash_env.pairs`.
        **options: every field of :class:`trash_env.rules.Rules`.
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        opponents: Sequence[OpponentEntry] | str = ("random",),
        seat: int | None = None,
        round_rewards: bool = False,
        illegal: str = "lose",
        render_mode: str | None = None,
        observation: str = "plain",
        **options: Any,
    ) -> None:
        self.rules = solo_rules(seat, round_rewards, options)
        self.observation = check_observation(observation)
        n = self.rules.num_players
        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of 'lose', 'raise', got {illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                "render_mode must be None or one of "
                f"{', '.join(map(repr, self.metadata['render_modes']))}, got {render_mode!r}"
            )
        self.seat_option = check_seat(seat, n, "seat")
        self.round_rewards = bool(round_rewards)
        self.illegal = illegal
        self._illegal = False
        self._pending = 0.0
        self.render_mode = render_mode
        self.observation_space = spaces.Box(
            0.0, 1.0, (observation_width(n, self.observation),), np.float32
        )
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.obs_version = OBS_VERSION
        self._rng = np.random.default_rng()
        self._agent_cache: dict[tuple[OpponentEntry, int], Any] = {}
        self.set_opponents(opponents)
        self.game: Game = None  # type: ignore[assignment]  # None until reset()
        self.seat = 0
        self.deal_seed = 0
        self.table: list[Any] = []  # the agent of every seat this episode (None: the learner)
        self._deals_paid = 0
        self._match: Match | None = None
        self._last_events = 0

    # ------------------------------------------------------------------ opponents

    def set_opponents(self, opponents: Sequence[OpponentEntry] | str) -> None:
        """Replace the opponent pool (:class:`trash_env.opponents.OpponentPool`) from the next
        episode on (``VecEnv.env_method`` calls this to refresh a self-play pool). A spec is
        built once per seat that draws it (agents may keep state within a game) and cached;
        Agent objects are used as given."""
        pool = OpponentPool(opponents)
        # Drop cached specs no longer in the pool (old self-play snapshots hold a network each).
        keep = {entry for entry in pool.entries if isinstance(entry, str)}
        self._agent_cache = {k: v for k, v in self._agent_cache.items() if k[0] in keep}
        for entry in keep:  # an unknown spec fails here, not at the next reset
            self._seat_agent(entry, 1)
        self.opponent_specs = pool.specs
        self.pool = pool

    def _seat_agent(self, entry: OpponentEntry, seat: int) -> Any:
        if not isinstance(entry, str):
            return entry
        key = (entry, seat)
        agent = self._agent_cache.get(key)
        if agent is None:
            agent = self._agent_cache[key] = build(entry)
        return agent

    # ------------------------------------------------------------------ its generator

    def state_dict(self) -> dict[str, Any]:
        """What deals this env's next episodes: its generator's state (numpy's PCG64, as
        plain values). An episode under way is a function of that state before its reset, the
        reset's seed and the actions (agents/training/env_state.py replays it)."""
        return {"rng": self._rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The generator as :meth:`state_dict` gave it (numpy refuses a malformed state)."""
        self._rng.bit_generator.state = state["rng"]

    # ------------------------------------------------------------------ Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """Deal a new episode. ``options`` may hold ``"seat"`` (the learner's seat for this
        episode only); anything else in it is rejected."""
        seed = check_seed(seed)  # before gymnasium's own check, which names no allowed values
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        seat = self.seat_option
        n = self.rules.num_players
        chosen = check_reset_options(options, ("seat",))
        if "seat" in chosen:
            seat = check_seat(chosen["seat"], n, "reset options: seat")
        rng = self._rng
        for _ in range(MAX_REDEALS):
            seats, drawn = self.pool.draw(rng, 1, n, seat)
            self.seat = int(seats[0])
            entries = self.pool.entries
            self.table = [
                None if j < 0 else self._seat_agent(entries[j], p)
                for p, j in enumerate(drawn[0].tolist())
            ]
            for agent in self.table:
                if agent is not None:
                    agent.reset(int(rng.integers(2**63)))
            self.deal_seed = int(rng.integers(2**63))  # the Game's seed: duplicate deals
            self.game = Game(self.rules, seed=self.deal_seed)
            self._match = None
            self._deals_paid = 0
            self._last_events = 0
            self._illegal = False
            # Deals an opponent finished before the learner's first decision (round_rewards,
            # tiny layouts) are paid with the first step: no reward is lost.
            self._pending = self._advance()
            if not self.game.done:
                if self.render_mode == "human":
                    self.render()
                return self._observe(), self._info()
        raise RuntimeError(f"no deal in {MAX_REDEALS} left the learner a decision")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        game = self.game
        if game is None:
            raise RuntimeError("call reset() before step()")
        if game.done or self._illegal:
            raise RuntimeError("the episode is over: call reset()")
        # bool, float, str, None, arrays, out of range: refused whatever ``illegal`` says
        action = check_action(action, NUM_ACTIONS - 1)
        self._last_events = len(game.events)
        self._illegal = False
        try:
            game.step(action)
        except ValueError:
            if self.illegal == "raise":
                raise  # the engine's message names the legal actions
            self._illegal = True  # the learner forfeits (PettingZoo's TerminateIllegal, -1)
            return self._observe(), learner_reward(0.0, True), True, False, self._info()
        # the deals' and the game's (Match), and what was paid before the first decision
        reward = learner_reward(add_payments(self._advance(), self._pending), False)
        self._pending = 0.0
        terminated = game.done and not game.truncated
        truncated = game.truncated
        if self.render_mode == "human":
            self.render()
        return self._observe(), float(reward), terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool mask over the 13 actions (sb3-contrib)."""
        return action_mask(self.game, self.seat).astype(bool)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the table as text; ``"human"``: print it (returns None);
        ``"rgb_array"``: a picture (``H x W x 3`` uint8, as the AEC env draws it)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        from trash_env import render as table

        names = [
            "learner" if p == self.seat else f"{getattr(a, 'name', 'agent')}_{p}"
            for p, a in enumerate(self.table)
        ]
        if self.render_mode == "rgb_array":
            return table.render_image(self.game, names, self._last_events)
        text = table.render_text(self.game, names, self._last_events)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ internals

    def _advance(self) -> float:
        """Answer calls and play the opponents until the learner decides or the game ends;
        return the learner's payment meanwhile (deals with ``round_rewards``, the game at its
        end)."""
        match = self._match
        if match is None or match.game is not self.game:
            # A new episode (or a game and table set by hand): seat the table; deals paid stay
            # paid.
            match = self._match = Match(self.game, self.table, round_rewards=self.round_rewards)
            match.deals_paid = self._deals_paid
        paid = match.advance()
        return 0.0 if paid is None else paid[self.seat]

    def _observe(self) -> np.ndarray:
        return extend(
            encode_observation(self.game, self.seat), self.rules.num_players, self.observation
        )

    def _info(self) -> dict:
        """The same keys, types and shapes on every step (batching libraries such as Tianshou
        stack infos): before the end ``placing`` is 0 and the winner mask all zero."""
        game, seat = self.game, self.seat
        if game.done:
            info = final_info(game, seat)
        else:  # every step but the last: no result yet (written out, it is the common case)
            info = {
                "placing": 0,
                "winners": np.zeros(self.rules.num_players, np.int8),
                "rounds_won": int(game.rounds_won[seat]),
                "truncated": False,
            }
        return learner_info(seat, action_mask(game, seat), self._illegal, info)


def learner_info(seat: int, mask: np.ndarray, illegal: bool, result: dict) -> dict:
    """A learner-seat env's step info (this env's, and the batched envs' at an episode's
    end): the seat, its action mask, whether the action was illegal, and ``result`` (the keys
    of :func:`trash_env.match.final_info`) with ``won`` read from its winner mask."""
    winners = result["winners"]
    return {
        "seat": seat,
        "action_mask": mask,
        "illegal_action": illegal,
        "winners": winners,
        "won": bool(winners[seat]),
        "placing": result["placing"],
        "rounds_won": result["rounds_won"],
        "truncated": result["truncated"],
    }
