"""Cards as small integers.

Suits never matter in Trash, so a card is its rank alone: ``0`` is a joker, ``1`` an Ace,
``2``..``10`` the number cards, ``11`` Jack, ``12`` Queen, ``13`` King. Which ranks are wild
depends on the rules (see :class:`trash_env.rules.Rules`).
"""

from __future__ import annotations

JOKER = 0
ACE = 1
JACK = 11
QUEEN = 12
KING = 13
NUM_RANKS = 14  # joker, A, 2..10, J, Q, K
NUM_SLOTS = 10

RANK_NAMES = ("Joker", "Ace", "2", "3", "4", "5", "6", "7", "8", "9", "10", "Jack", "Queen", "King")
RANK_SHORT = ("*", "A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def card_name(card: int) -> str:
    """The name people use for a card ('Ace', '7', 'Jack', 'Joker')."""
    return RANK_NAMES[card]


def card_short(card: int) -> str:
    """One- or two-character label for tables ('A', '7', 'J', '*')."""
    return RANK_SHORT[card]


def build_deck(num_decks: int, jokers: bool) -> list[int]:
    """Every card of ``num_decks`` 52-card decks (4 of each rank), plus 2 jokers per deck."""
    deck = [rank for rank in range(ACE, KING + 1) for _ in range(4 * num_decks)]
    if jokers:
        deck += [JOKER] * (2 * num_decks)
    return deck


def rank_totals(num_decks: int, jokers: bool) -> list[int]:
    """How many cards of each rank the decks hold, indexed by rank."""
    totals = [4 * num_decks] * NUM_RANKS
    totals[JOKER] = 2 * num_decks if jokers else 0
    return totals
