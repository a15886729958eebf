"""Rule-of-thumb bots: ``greedy`` (what a person plays) and ``counting`` (greedy + card counting).

Both decide from public information alone, read from the :class:`trash_env.view.PublicView`
(face-up cards, the discard pile, the held card, the hidden-card counts); the observation vector
is not needed. The choices they face are few:

- draw: take the discard top when it fits an open slot of the layout (its own slot is face-down
  or holds a wild; a wild fits while any slot is face-down), else draw from the stock. A card
  that fits is a sure placement, a stock card only a chance of one, so taking it never loses.
- swap: always swap. The number is laid and the wild comes back to be laid again: one more slot
  is face-up and the turn goes on, where declining ends it.
- wild: which face-down slot gets the wild. ``greedy`` takes the highest; ``counting`` the slot
  whose natural card is least likely to come (see :func:`natural_supply`).

The functions below take plain public values so that the search bot's rollouts can run the same
policy on a determinised game without building views.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.bots.base import Agent, register_agent
from trash_env.engine import (
    CALL_TRASH,
    DOWN,
    DRAW_STOCK,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
)
from trash_env.view import PublicView

_DRAW, _WILD, _SWAP, _CALL = Decision.DRAW, Decision.WILD, Decision.SWAP, Decision.CALL


def fits(card: int, state: Sequence[int], size: int, wild: Sequence[bool]) -> bool:
    """Whether ``card`` would be placed at once in a layout with slot states ``state``."""
    if card < 0:
        return False
    if wild[card]:
        return DOWN in state[:size]
    return 1 <= card <= size and state[card - 1] in (DOWN, WILD_UP)


def draw_choice(top: int, state: Sequence[int], size: int, wild: Sequence[bool]) -> int:
    """Take the discard top when it fits, else draw from the stock."""
    return TAKE_DISCARD if fits(top, state, size, wild) else DRAW_STOCK


def natural_supply(view: PublicView, rank: int, discard_weight: float = 0.5) -> float:
    """How likely the acting seat is to find the natural card ``rank`` (a relative score).

    Copies nobody can see (``hidden_counts``: face-down anywhere, or in the stock) may come;
    copies buried in the discard pile come back only after a reshuffle (weight
    ``discard_weight``); copies face-up in layouts or in hand are gone. Every other player
    whose slot ``rank`` is still open competes for the same copies, so the supply is shared."""
    hidden = view.hidden_counts()[rank]
    buried = view.discard[:-1].count(rank)
    rivals = 0
    for p in range(view.num_players):
        if p != view.seat and rank <= view.sizes[p]:
            if view.slot_states(p)[rank - 1] in (DOWN, WILD_UP):
                rivals += 1
    return (hidden + discard_weight * buried) / (1 + rivals)


class GreedyAgent(Agent):
    """Takes a fitting discard, always swaps, lays a wild on its highest face-down slot."""

    name = "greedy"
    uses_observation = False
    batch_kernel = "greedy"  # trash_env.vector plays exactly this class compiled

    def act(self, observation: object, action_mask: object, view: PublicView) -> int:
        decision = view.decision
        me = view.seat
        if decision is _DRAW:
            return draw_choice(view.discard_top, view.slot_states(me), view.sizes[me], view.wild)
        if decision is _SWAP:
            return view.held - 1
        if decision is _WILD:
            return self.wild_slot(view)
        if decision is _CALL:
            return CALL_TRASH
        raise ValueError(f"{self.name}: no decision to take (decision {decision.name})")

    def wild_slot(self, view: PublicView) -> int:
        return max(view.legal_actions())


class CountingAgent(GreedyAgent):
    """Greedy, but the wild goes on the face-down slot whose natural card is least likely to
    come (fewest unseen copies, shared with the rivals who still need that rank); ties go to
    the highest slot. ``discard_weight`` scores copies buried in the discard pile."""

    name = "counting"
    batch_kernel = "counting"  # compiled in trash_env.vector, with discard_weight

    def __init__(self, seed: int | None = None, discard_weight: float = 0.5) -> None:
        super().__init__(seed)
        if not 0.0 <= discard_weight <= 1.0:
            raise ValueError(f"counting: discard_weight must be from 0 to 1, got {discard_weight}")
        self.discard_weight = discard_weight

    def wild_slot(self, view: PublicView) -> int:
        slots = view.legal_actions()
        return min(slots, key=lambda s: (natural_supply(view, s + 1, self.discard_weight), -s))


register_agent("greedy", GreedyAgent)
register_agent("counting", CountingAgent, discard_weight=float)
