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
see :mod:`agents.heuristics`). The bot never reads hidden cards: everything it simulates comes
from ``determinize``, whose result depends on public information and the bot's own generator
only, so its choices are a function of public information and its seed.
"""

from __future__ import annotations

from agents.base import Agent, register_agent
from agents.heuristics import draw_choice
from trash_env.engine import CALL_TRASH, DOWN, WILD_UP, Decision, Game
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
            step(CALL_TRASH)
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

    def __init__(
        self,
        seed: int | None = None,
        rollouts: int = 200,
        horizon: str = "round",
        policy: str = "greedy",
    ) -> None:
        super().__init__(seed)
        if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
            raise ValueError(f"search: rollouts must be an integer of 1 or more, got {rollouts!r}")
        if horizon not in HORIZONS:
            raise ValueError(
                f"search: horizon must be one of {', '.join(HORIZONS)}, got {horizon!r}"
            )
        if policy not in POLICIES:
            raise ValueError(
                f"search: policy must be one of {', '.join(POLICIES)}, got {policy!r}"
            )
        self.rollouts = rollouts
        self.horizon = horizon
        self.policy = policy

    def act(self, observation: object, action_mask: object, view: PublicView) -> int:
        decision = view.decision
        legal = view.legal_actions()
        if decision is _CALL:
            return CALL_TRASH
        if decision is _SWAP:
            return view.held - 1
        if len(legal) == 1:
            return legal[0]
        return self._search(view, legal)

    def action_values(self, view: PublicView, legal: list[int] | None = None) -> dict[int, float]:
        """Mean rollout outcome of every candidate action (for inspection and tests)."""
        legal = view.legal_actions() if legal is None else legal
        me = view.seat
        per_action = max(1, self.rollouts // len(legal))
        totals = dict.fromkeys(legal, 0.0)
        horizon, policy = self.horizon, self.policy
        for _ in range(per_action):
            world = view.determinize(self.rng)
            deal = world.deal_number
            for action in legal:
                game = world.clone(events=False)
                game.step(action)
                rollout(game, horizon, policy)
                totals[action] += outcome(game, me, deal)
        return {action: total / per_action for action, total in totals.items()}

    def _search(self, view: PublicView, legal: list[int]) -> int:
        values = self.action_values(view, legal)
        best = max(values.values())
        # Ties (common: many rollouts end alike) go to the greedy choice, then the lowest action.
        tied = [a for a in legal if values[a] >= best - 1e-12]
        if len(tied) > 1:
            greedy = self._greedy(view, legal)
            if greedy in tied:
                return greedy
        return tied[0]

    def _greedy(self, view: PublicView, legal: list[int]) -> int:
        me = view.seat
        if view.decision is _DRAW:
            return draw_choice(view.discard[-1], view.slot_states(me), view.sizes[me], view.wild)
        return legal[-1]


register_agent("search", SearchAgent, rollouts=int, horizon=str, policy=str)
