"""The rules as the arrays the batched engines read (numba's kernels and the JAX engine),
derived from :class:`~trash_env.rules.Rules` here and nowhere else.

``cfg`` is ``Rules.codes()`` (one integer per option, read at the indices of
:mod:`trash_env.codes`) then the number of cards; ``wild`` the wild table per rank;
``totals`` the cards of each rank in the decks; ``deck`` the cards in ``build_deck`` order
(the shuffles must see the reference's order), then padding up to the pile capacity. NumPy
only: each engine converts them to its own integer types.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from trash_env.cards import build_deck, rank_totals
from trash_env.rules import Rules

# The piles' capacities: one deck with jokers, two decks with jokers, the most decks the rules
# allow. Every engine compiles once per capacity (numba per record type, JAX per array shape),
# so a few capacities serve every rule set.
PILE_CAPACITIES = (54, 2 * 54, 12 * 54)


def pile_capacity(cards: int, least: int = PILE_CAPACITIES[0]) -> int:
    """The smallest capacity of ``PILE_CAPACITIES``, at least ``least``, that holds
    ``cards``."""
    return next(c for c in PILE_CAPACITIES if c >= max(cards, least))


class RulesArrays(NamedTuple):
    """The rules as arrays (see the module docstring)."""

    cfg: np.ndarray  # int32 (CFG_LEN,)
    wild: np.ndarray  # bool (NUM_RANKS,)
    totals: np.ndarray  # int32 (NUM_RANKS,)
    deck: np.ndarray  # int32 (capacity,): the cards, then zeros


def rules_arrays(rules: Rules, least_capacity: int = PILE_CAPACITIES[0]) -> RulesArrays:
    """``rules`` as arrays, the deck padded to ``pile_capacity(cards, least_capacity)``."""
    cards = rules.total_cards
    deck = np.zeros(pile_capacity(cards, least_capacity), np.int32)
    deck[:cards] = build_deck(rules.decks, rules.jokers)
    return RulesArrays(
        cfg=np.array((*rules.codes(), cards), np.int32),
        wild=np.array(rules.wild_table(), np.bool_),
        totals=np.array(rank_totals(rules.decks, rules.jokers), np.int32),
        deck=deck,
    )
