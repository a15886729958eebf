"""Monte-Carlo search over determinisations: spec ``search`` (``search:rollouts=200``).

At a decision with two or more options the bot draws ``K`` determinisations of the game
(:meth:`trash_env.view.PublicView.determinize`: the hidden cards re-dealt at random, consistently
with public information), applies each candidate action to a copy of every one of them and plays
on with a fast greedy policy for every seat, to the end of the deal (``horizon=round``, the
default) or of the game (``horizon=game``). The action with the best mean outcome for the acting
seat is chosen. The same determinisations and rollout shuffles are used for every candidate
(common random numbers), so the comparison is paired and far less noisy than the budget
suggests. Outcome: the zero-sum returns of the deal (winners of the deal count as winners), or
of the game when it ends.

Options: ``rollouts`` (the budget per decision, split evenly over the candidates; at least one
rollout each), ``horizon`` (``round`` or ``game``), ``policy`` (``greedy`` or ``counting``
placement of the wilds in the rollouts). A swap is accepted without search (it dominates:
see :mod:`agents.bots.heuristics`). The bot never reads hidden cards: everything it simulates comes
from ``determinize``, whose result depends on public information and the bot's own generator
only, so its choices are a function of public information and its seed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agents.bots.base import Agent, register_agent
from agents.bots.heuristics import CountingAgent, draw_choice, fits
from trash_env.engine import CALL_TRASH, DOWN, DRAW_STOCK, TAKE_DISCARD, WILD_UP, Decision, Game
from trash_env.match import answer_calls
from trash_env.view import PublicView

_DRAW, _WILD, _SWAP, _CALL = Decision.DRAW, Decision.WILD, Decision.SWAP, Decision.CALL
HORIZONS = ("round", "game")
POLICIES = ("greedy", "counting")


def _counting_slot(game: Game, player: int, slots: list[int]) -> int:
    """The counting bot's wild slot, on a (determinised) game's public parts."""
    hidden = game.hidden_counts()
    buried = game.discard[:-1]
    best, best_key = slots[-1], None
    for s in slots:
        rank = s + 1
        rivals = sum(
            1
            for p in range(game.num_players)
            if p != player and rank <= game.sizes[p] and game.state[p][s] in (DOWN, WILD_UP)
        )
        key = ((hidden[rank] + 0.5 * buried.count(rank)) / (1 + rivals), -s)
        if best_key is None or key < best_key:
            best, best_key = s, key
    return best


def _branch(world: Game, generator: np.random.Generator, state: Mapping[str, Any]) -> Game:
    """A copy of ``world`` whose generator is ``generator`` set to ``state`` (the world's).

    ``Game.clone`` deep-copies the generator, two thirds of a clone's cost; a search makes one
    branch per candidate per determinisation and throws it away after the rollout, so a spare
    generator with the state copied in does the same work for a fraction of that."""
    own, world.rng = world.rng, None  # type: ignore[assignment]  # not cloned: replaced below
    try:
        game = world.clone(events=False)
    finally:
        world.rng = own
    generator.bit_generator.state = state
    game.rng = generator
    return game


def rollout(game: Game, horizon: str = "round", policy: str = "greedy") -> None:
    """Play ``game`` on with the greedy (or counting) policy for every seat, in place, to the end
    of the current deal (``"round"``) or of the game. Reads public parts of the game only."""
    deal = game.deal_number
    wild = game.wild
    counting = policy == "counting"
    step = game.step
    while not game.done:
        if horizon == "round" and game.deal_number != deal:
            return
        decision = game.decision
        player = game.current
        if decision is _DRAW:
            step(draw_choice(game.discard[-1], game.state[player], game.sizes[player], wild))
        elif decision is _SWAP:
            step(game.held - 1)
        elif decision is _WILD:
            slots = game.legal_actions()
            step(_counting_slot(game, player, slots) if counting else slots[-1])
        elif decision is _CALL:
            answer_calls(game)
        else:  # pragma: no cover - a running game always has a decision
            raise RuntimeError(f"rollout: no decision in a running game ({decision!r})")


def outcome(game: Game, player: int, deal: int) -> float:
    """The acting seat's result after a rollout that started in deal ``deal``: the game's
    returns once it is over, else the zero-sum returns of the deal just finished."""
    if game.done:
        return game.returns()[player]  # all zero when truncated
    return game.shares_to_returns(game.round_results[deal])[player]


class SearchAgent(Agent):
    """Determinised Monte-Carlo search with greedy rollouts (see the module docstring)."""

    name = "search"
    uses_observation = False

    def __init__(
        self,
        seed: int | None = None,
        rollouts: int = 200,
        horizon: str = "round",
        policy: str = "greedy",
        z: float = 1.64,
    ) -> None:
        super().__init__(seed)
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ValueError(f"search: rollouts must be an integer of 1 or more, got {rollouts!r}")
        if horizon not in HORIZONS:
            raise ValueError(
                f"search: horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}"
            )
        if policy not in POLICIES:
            raise ValueError(f"search: policy must be one of {', '.join(POLICIES)}, got {policy!r}")
        if not 0.0 <= z <= 10.0:
            raise ValueError(f"search: z must be from 0 to 10, got {z!r}")
        self.z = z
        self._spare: list[np.random.Generator] = []
        self.rollouts = rollouts
        self.horizon = horizon
        self.policy = policy

    def act(self, observation: object, action_mask: object, view: PublicView) -> int:
        decision = view.decision
        if decision is _CALL:
            return CALL_TRASH
        if decision is _SWAP:
            return view.held - 1
        me = view.seat
        if decision is _DRAW:
            top = view.discard_top
            if fits(top, view.slot_states(me), view.sizes[me], view.wild):
                return TAKE_DISCARD  # a sure placement dominates a chance of one
        legal = view.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self._search(view, legal)

    def default_action(self, view: PublicView, legal: list[int]) -> int:
        """The rollout policy's own choice, kept unless search shows something better."""
        if view.decision is _DRAW:
            return DRAW_STOCK  # the discard top does not fit (act takes it when it does)
        if self.policy == "counting":
            return CountingAgent().wild_slot(view)
        return legal[-1]

    def action_samples(self, view: PublicView, legal: list[int]) -> dict[int, list[float]]:
        """Rollout outcomes of every candidate action, one per determinisation, paired: the
        k-th outcome of every action comes from the same determinisation and shuffles."""
        me = view.seat
        per_action = max(1, self.rollouts // len(legal))
        samples: dict[int, list[float]] = {action: [] for action in legal}
        horizon, policy = self.horizon, self.policy
        spare = self._spare_generators(len(legal))
        for _ in range(per_action):
            world = view.determinize(self.rng)
            deal = world.deal_number
            state = world.rng.bit_generator.state
            for action, generator in zip(legal, spare, strict=False):
                game = _branch(world, generator, state)
                game.step(action)
                rollout(game, horizon, policy)
                samples[action].append(outcome(game, me, deal))
        return samples

    def _spare_generators(self, count: int) -> list[np.random.Generator]:
        """Generators reused as the branches' own (their state is overwritten every time)."""
        while len(self._spare) < count:
            self._spare.append(np.random.default_rng(0))
        return self._spare

    def _search(self, view: PublicView, legal: list[int]) -> int:
        default = self.default_action(view, legal)
        samples = self.action_samples(view, legal)
        base = np.array(samples[default])
        best, best_gain = default, 0.0
        for action in legal:
            if action == default:
                continue
            diff = np.array(samples[action]) - base
            gain = float(diff.mean())
            spread = float(diff.std(ddof=1)) if len(diff) > 1 else float("inf")
            se = spread / np.sqrt(len(diff))
            # Deviate from the default only on a clear paired gain: rollout noise would
            # otherwise pick among near-equal options at random, and lose to the default.
            if gain > self.z * se and gain > best_gain:
                best, best_gain = action, gain
        return best


register_agent("search", SearchAgent, rollouts=int, horizon=str, policy=str, z=float)
