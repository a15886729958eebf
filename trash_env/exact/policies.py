"""Fixed policies on public states of the model: ``greedy`` (what agents/bots/heuristics.py's
``greedy`` plays, here as a function of a :class:`~trash_env.exact.model.State`) and
``random`` (uniform over the legal actions), for exact policy evaluation and tie-breaks."""

from __future__ import annotations

from trash_env.engine import DOWN, DRAW_STOCK, TAKE_DISCARD, WILD_UP
from trash_env.exact.model import DRAW, SWAP, WILD, Model, State


def fits(model: Model, state: State, cls: int) -> bool:
    """Whether a card of class ``cls`` would be placed at once by the player to act."""
    row = state.slots[state.player]
    if cls < 0:
        return False
    if cls == model.wild:
        return DOWN in row
    return 1 <= cls <= len(row) and row[cls - 1] in (DOWN, WILD_UP)


def greedy_action(model: Model, state: State) -> int:
    """Take the discard top when it fits, else draw; always swap; a wild on the highest
    face-down slot (the ``greedy`` bot's rules)."""
    if state.phase == DRAW:
        return TAKE_DISCARD if fits(model, state, state.top) else DRAW_STOCK
    if state.phase == SWAP:
        return state.held - 1
    if state.phase == WILD:
        return max(model.legal_actions(state))
    raise ValueError(f"no decision to take in phase {state.phase}")
