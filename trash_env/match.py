"""One game with agents at the table: the loop every table of trash_env and agents shares.

The AEC env, the single-agent env, the evaluation, the terminal game and train.py's
demonstrations all drive a :class:`~trash_env.engine.Game` the same way: ask the agent of the
seat to act (its observation only if it reads one), answer the "Trash!" call, pay the deals
that ended (``round_rewards``) and read the results at the end. :class:`Match` is that loop,
written once. Seats hold :class:`trash_env.agent.Agent` objects, or ``None`` for a seat that
decides outside the match (the learner of an env, every seat of the AEC env, the person at the
terminal): :meth:`Match.advance` plays the seated agents and stops where such a seat must act.

The reward: :meth:`Match.settle` and :meth:`Match.advance` pay the seats when the game calls
for it (the finished deals with ``round_rewards``, the game at its end), assembled as
:mod:`trash_env.reward` assembles every table's payments.

The call: every table answers ``CALL_TRASH`` for its seats (bots always remember to call; the
envs keep the action space at 13), in :func:`answer_calls`, the one place it is answered. Only
the seats listed in ``own_calls`` (the person at the terminal) answer it themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from trash_env.agent import Agent
from trash_env.engine import CALL_TRASH, NUM_ACTIONS, Decision, Game
from trash_env.observation import action_mask, encode_observation
from trash_env.reward import add_payments, deal_shares
from trash_env.view import PublicView

_CALL = Decision.CALL  # a module constant: enum-class attribute reads are slow


def answer_calls(game: Game) -> None:
    """Answer a pending "Trash!" call with ``CALL_TRASH`` (what every table does for its
    agents, and the search bot's rollouts for every seat)."""
    while game.decision is _CALL:
        game.step(CALL_TRASH)


def final_info(game: Game, seat: int) -> dict:
    """The result of ``seat`` once ``game`` is over, in the types every step's infos use:
    ``placing`` (1 = won; 0 while running or if truncated), ``winners`` (int8 mask over the
    seats), ``rounds_won`` and ``truncated``."""
    winners = np.zeros(game.num_players, np.int8)
    if game.done:
        winners[list(game.winners)] = 1
    return {
        "placing": 0 if game.placings is None else int(game.placings[seat]),
        "winners": winners,
        "rounds_won": int(game.rounds_won[seat]),
        "truncated": bool(game.truncated),
    }


class Match:
    """``game`` with ``agents[p]`` at seat ``p`` (``None``: the seat decides outside the match).

    Args:
        game: the game, as dealt.
        agents: one entry per seat; empty for a table without seated agents (the AEC env).
        round_rewards: whether :meth:`advance`/:meth:`settle` pay every finished deal
            (``Game.shares_to_returns`` of its shrinkers); they pay the game at its end anyway.
        own_calls: seats that answer the "Trash!" call themselves; the others get it answered.
        on_action: called with ``(player, action)`` before every step the match takes (the
            terminal game logs them).
    """

    __slots__ = (
        "game",
        "agents",
        "views",
        "round_rewards",
        "deals_paid",
        "game_paid",
        "own_calls",
        "on_action",
    )

    def __init__(
        self,
        game: Game,
        agents: Sequence[Agent | None] = (),
        *,
        round_rewards: bool = False,
        own_calls: Collection[int] = (),
        on_action: Callable[[int, int], None] | None = None,
    ) -> None:
        n = game.num_players
        if agents and len(agents) != n:
            raise ValueError(f"Match: {n} seats need {n} agents, got {len(agents)}")
        self.game = game
        self.agents = list(agents) if agents else [None] * n
        self.views = [PublicView(game, p) for p in range(n)]
        self.round_rewards = round_rewards
        self.deals_paid = 0
        self.game_paid = False
        self.own_calls = frozenset(own_calls)
        self.on_action = on_action

    def settle(self) -> list[float] | None:
        """After the engine moved: answer the call for the seat to act, and return every seat's
        payment since the last settle (the module docstring; ``None`` when nothing is paid)."""
        game = self.game
        if game.decision is _CALL and game.current not in self.own_calls:
            self._answer_calls()
        paid = None
        if self.round_rewards and self.deals_paid < len(game.round_results):
            paid = self._pay_deals()
        if game.done and not self.game_paid:
            paid = self._pay_game(paid)
        return paid

    def advance(self, moves: int | None = None) -> list[float] | None:
        """Play the seated agents until a seat without one must act or the game ends, or
        after ``moves`` agent moves (each with the call that may follow it: the web table
        plays one at a time to pace them); return the deal payments made meanwhile (as
        :meth:`settle`)."""
        # settle() written out: this loop runs once per opponent move in the solo env.
        game, agents, views = self.game, self.agents, self.views
        own_calls, round_rewards, results = self.own_calls, self.round_rewards, game.round_results
        total = None
        left = -1 if moves is None else moves
        while True:
            if game.decision is _CALL and game.current not in own_calls:
                self._answer_calls()
            if round_rewards and self.deals_paid < len(results):
                total = add_payments(total, self._pay_deals())
            if game.done:
                return total if self.game_paid else self._pay_game(total)
            if left == 0:
                return total
            p = game.current
            agent = agents[p]
            if agent is None or game.decision is _CALL:  # a seat that answers its own call
                return total
            mask = action_mask(game, p)
            observation = encode_observation(game, p) if agent.uses_observation else None
            action = int(agent.act(observation, mask, views[p]))
            if not (0 <= action < NUM_ACTIONS and mask[action]):
                spec = getattr(agent, "spec", agent.name)
                raise ValueError(
                    f"agent {spec!r} at seat {p} chose illegal action {action} at a "
                    f"{game.decision.name} decision; legal: {np.flatnonzero(mask).tolist()}"
                )
            if self.on_action is not None:
                self.on_action(p, action)
            game.step(action)
            left -= 1

    def _pay_deals(self) -> list[float]:
        paid = deal_shares(self.game, self.deals_paid)
        self.deals_paid = len(self.game.round_results)
        return paid

    def _pay_game(self, paid: list[float] | None) -> list[float] | None:
        """``paid`` plus the game's returns, once, at its end (nothing more when truncated)."""
        self.game_paid = True
        if self.game.truncated:
            return paid
        return add_payments(paid, self.game.returns())

    def play(self) -> Game:
        """Play the whole game (every seat must hold an agent); return the finished game."""
        self.advance()
        if not self.game.done:
            raise ValueError(f"Match.play: seat {self.game.current} has no agent")
        return self.game

    def _answer_calls(self) -> None:
        game, on_action = self.game, self.on_action
        if on_action is None:
            answer_calls(game)
            return
        while game.decision is _CALL:
            on_action(game.current, CALL_TRASH)
            game.step(CALL_TRASH)
