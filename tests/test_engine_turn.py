"""One turn of Trash, rule by rule, on stacked decks: the draw, chains, wild cards, swaps and
everything that ends a turn (docs/rules.md, "A turn" and "Stock exhausted")."""

from collections import Counter

import numpy as np
import pytest
from helpers import A, J, K, Q, game, play, since, slots

from trash_env.engine import (
    DECLINE,
    DOWN,
    DRAW_STOCK,
    NATURAL,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
)


def test_first_turn_draws_from_the_stock_without_a_decision():
    g = game([[Q, None, None], [None] * 3], stock=[K, 9])
    assert since(g, 0)[:3] == [("deal", 0, -1, 0), ("draw_stock", 0, K, -1), ("discard", 0, K, -1)]
    assert g.decision == Decision.DRAW and g.current == 1


def test_chain_continues_with_every_uncovered_card_that_fits():
    # Ace -> slot 1 uncovers a 3 -> slot 3 uncovers a 4 -> slot 4 uncovers a King: discarded.
    g = game([[3, Q, 4, K, Q], [None] * 5], stock=[A])
    assert since(g, 1) == [
        ("draw_stock", 0, A, -1),
        ("place", 0, A, 0),
        ("pickup", 0, 3, 0),
        ("place", 0, 3, 2),
        ("pickup", 0, 4, 2),
        ("place", 0, 4, 3),
        ("pickup", 0, K, 3),
        ("discard", 0, K, -1),
    ]
    assert slots(g, 0) == [NATURAL, DOWN, NATURAL, NATURAL, DOWN]
    assert g.layout[0][:4] == [A, Q, 3, 4]
    assert g.discard == [K] and g.current == 1


def test_wild_needs_a_decision_with_two_face_down_slots():
    # The 2 fills slot 2 and uncovers a Jack; slots 1 and 3 are still face-down.
    g = game([[Q, J, 7], [None] * 3], stock=[2])
    assert g.decision == Decision.WILD and g.held == J
    assert g.legal_actions() == [0, 2]
    with pytest.raises(ValueError, match="legal actions"):
        g.step(1)  # slot 2 is face-up
    mark = len(g.events)
    play(g, 2)
    assert since(g, mark) == [("wild", 0, J, 2), ("pickup", 0, 7, 2), ("discard", 0, 7, -1)]
    assert slots(g, 0) == [DOWN, NATURAL, WILD_UP]


def test_wild_goes_to_the_only_face_down_slot_without_a_decision():
    # The 2 uncovers a Jack with slot 1 the only face-down slot left: it goes there at once.
    g = game([[Q, J], [None] * 2], stock=[2])
    assert since(g, 1)[:6] == [
        ("draw_stock", 0, 2, -1),
        ("place", 0, 2, 1),
        ("pickup", 0, J, 1),
        ("wild", 0, J, 0),
        ("pickup", 0, Q, 0),
        ("round_won", 0, -1, -1),
    ]


def _wild_in_slot_3(**options):
    """Player 0 lays a Jack on slot 3 (a Queen under it); player 1 discards a King; player 0
    then draws a 3, whose slot holds the wild."""
    g = game([[Q, Q, Q, 9, K], [None] * 5], stock=[J, K, 3], **options)
    play(g, 2)  # the Jack on slot 3, the Queen under it is discarded
    play(g, DRAW_STOCK)  # player 1: King, discarded
    play(g, DRAW_STOCK)  # player 0: the 3
    return g


def test_swap_offered_for_a_number_whose_slot_holds_a_wild():
    g = _wild_in_slot_3()
    assert g.current == 0 and g.held == 3
    assert g.decision == Decision.SWAP
    assert g.legal_actions() == [2, DECLINE]


def test_swap_lays_the_number_and_the_wild_goes_on():
    g = _wild_in_slot_3()
    mark = len(g.events)
    play(g, 2)
    # The 3 is laid naturally, the Jack comes back to hand and needs a new face-down slot.
    assert since(g, mark) == [("swap", 0, 3, 2), ("pickup", 0, J, 2)]
    assert g.state[0][2] == NATURAL and g.layout[0][2] == 3
    assert g.decision == Decision.WILD and g.held == J
    assert g.legal_actions() == [0, 1, 3, 4]
    assert g.face_down_count(0) == 4  # a swap turns no card up
    mark = len(g.events)
    play(g, 4)
    assert since(g, mark) == [("wild", 0, J, 4), ("pickup", 0, K, 4), ("discard", 0, K, -1)]
    assert slots(g, 0) == [DOWN, DOWN, NATURAL, DOWN, WILD_UP]
    assert g.current == 1


def test_declined_swap_discards_the_number_and_ends_the_turn():
    g = _wild_in_slot_3()
    mark = len(g.events)
    play(g, DECLINE)
    assert since(g, mark) == [("decline", 0, 3, -1), ("discard", 0, 3, -1)]
    assert g.state[0][2] == WILD_UP and g.layout[0][2] == J
    assert g.discard[-1] == 3 and g.current == 1 and g.decision == Decision.DRAW


def test_jack_uncovered_under_a_slot_is_played_as_a_wild():
    # The Ace uncovers a Jack: the player chooses among the face-down slots 2..4.
    g = game([[J, Q, 7, 4], [None] * 4], stock=[A])
    assert since(g, 1) == [("draw_stock", 0, A, -1), ("place", 0, A, 0), ("pickup", 0, J, 0)]
    assert g.decision == Decision.WILD and g.legal_actions() == [1, 2, 3]
    mark = len(g.events)
    play(g, 1)
    assert since(g, mark) == [("wild", 0, J, 1), ("pickup", 0, Q, 1), ("discard", 0, Q, -1)]
    assert slots(g, 0) == [NATURAL, WILD_UP, DOWN, DOWN]


def test_number_uncovered_under_a_wild_gets_the_swap_choice():
    # The Jack goes on slot 4 and uncovers the 4 itself: its slot now holds the wild.
    g = game([[J, Q, 7, 4], [None] * 4], stock=[A])
    play(g, 3)
    assert g.decision == Decision.SWAP and g.held == 4 and g.legal_actions() == [3, DECLINE]


def test_duplicate_ends_the_turn():
    # Ace -> slot 1 uncovers a 4 -> slot 4 uncovers another 4: its slot is done, discard.
    g = game([[4, Q, Q, 4, Q], [None] * 5], stock=[A])
    assert since(g, 1)[-3:] == [("place", 0, 4, 3), ("pickup", 0, 4, 3), ("discard", 0, 4, -1)]
    assert g.current == 1 and g.discard == [4]
    assert slots(g, 0) == [NATURAL, DOWN, DOWN, NATURAL, DOWN]


def test_number_above_the_layout_size_ends_the_turn():
    # A layout of 5: the 6 uncovered under slot 1 has no slot.
    g = game([[6, Q, Q, Q, Q], [None] * 5], stock=[A])
    assert since(g, 1)[-2:] == [("pickup", 0, 6, 0), ("discard", 0, 6, -1)]
    assert g.current == 1
    # A 5 still fits a layout of 5 (its last slot).
    g = game([[5, Q, Q, Q, K], [None] * 5], stock=[A])
    assert since(g, 1)[-3:] == [("place", 0, 5, 4), ("pickup", 0, K, 4), ("discard", 0, K, -1)]


@pytest.mark.parametrize("card", [Q, K])
def test_non_wild_face_card_ends_the_turn(card):
    g = game([[None] * 10, [None] * 10], stock=[card])
    assert since(g, 1) == [("draw_stock", 0, card, -1), ("discard", 0, card, -1)]
    assert g.current == 1 and slots(g, 0) == [DOWN] * 10


def test_round_won_at_once_mid_chain_rest_not_played():
    # Jack on slot 1 uncovers a 3 -> slot 3 uncovers a 2 -> slot 2 uncovers an Ace. Every slot
    # is face-up: the round is won there; the Ace is not offered as a swap for the Jack.
    g = game([[3, A, 2], [None] * 3], stock=[J])
    play(g, 0)
    kinds = [e.kind for e in g.events]
    assert "swap" not in kinds and kinds.count("round_won") == 1
    i = kinds.index("round_won")
    assert since(g, 0)[i - 6 : i + 3] == [
        ("wild", 0, J, 0),
        ("pickup", 0, 3, 0),
        ("place", 0, 3, 2),
        ("pickup", 0, 2, 2),
        ("place", 0, 2, 1),
        ("pickup", 0, A, 1),
        ("round_won", 0, -1, -1),
        ("discard", 0, A, -1),
        ("shrink", 0, -1, 2),
    ]
    assert g.round_results == [(0,)] and g.sizes == [2, 3] and g.rounds_won == [1, 0]


def test_taking_the_discard_top_is_legal_even_when_it_does_not_fit():
    g = game([[None] * 4, [None] * 4], stock=[Q, 9])
    assert g.decision == Decision.DRAW and g.legal_actions() == [DRAW_STOCK, TAKE_DISCARD]
    stock = len(g.stock)
    mark = len(g.events)
    play(g, TAKE_DISCARD)
    assert since(g, mark) == [("take_discard", 1, Q, -1), ("discard", 1, Q, -1)]
    assert g.discard == [Q] and len(g.stock) == stock and g.current == 0


def test_taking_a_discard_that_fits_starts_a_chain():
    # Player 0: Ace -> slot 1 uncovers a 3 -> slot 3 uncovers another 3: discarded.
    g = game([[3, Q, 3, Q], [9, 8, K, 7]], stock=[A])
    assert g.discard == [3] and g.current == 1
    mark = len(g.events)
    play(g, TAKE_DISCARD)
    assert since(g, mark) == [
        ("take_discard", 1, 3, -1),
        ("place", 1, 3, 2),
        ("pickup", 1, K, 2),
        ("discard", 1, K, -1),
    ]
    assert g.discard == [K] and slots(g, 1) == [DOWN, DOWN, NATURAL, DOWN]


# 5 players of 9 cards with one deck leave 7 cards: a stock of Queens and Kings that nobody can
# use. Turn 1 draws without asking, turns 2..7 choose the stock; then the stock is empty and
# turn 8 (player 2) begins with a reshuffle.
UNUSABLE = [Q, K, Q, K, Q, K, Q]


def _exhaust(reshuffle):
    g = game([[None] * 9] * 5, stock=UNUSABLE, num_decks=1, reshuffle=reshuffle)
    for _ in range(5):
        play(g, DRAW_STOCK)
    assert len(g.stock) == 1 and g.discard == UNUSABLE[:6]
    mark = len(g.events)
    play(g, DRAW_STOCK)
    return g, since(g, mark)


def test_reshuffle_keep_top_keeps_the_top_discard():
    g, events = _exhaust("keep_top")
    assert events == [("draw_stock", 1, Q, -1), ("discard", 1, Q, -1), ("reshuffle", -1, 6, -1)]
    assert g.discard == [Q]  # the last card discarded stays as the discard pile
    assert Counter(g.stock) == Counter({Q: 3, K: 3})
    assert g.current == 2 and g.decision == Decision.DRAW  # both piles hold cards
    assert g.hidden_counts()[Q] == 3  # the fourth Queen is the discard top


def test_reshuffle_all_shuffles_the_whole_pile():
    g, events = _exhaust("all")
    assert events[:3] == [("draw_stock", 1, Q, -1), ("discard", 1, Q, -1), ("reshuffle", -1, 7, -1)]
    # The discard pile is empty, so player 2 draws from the new stock without a decision.
    assert events[3][:2] == ("draw_stock", 2) and events[3][2] in (Q, K)
    assert events[4] == ("discard", 2, events[3][2], -1)
    assert g.discard == [events[3][2]]
    assert Counter(g.stock) + Counter(g.discard) == Counter({Q: 4, K: 3})
    assert g.current == 3 and g.decision == Decision.DRAW


def test_reshuffled_stock_order_comes_from_the_rng():
    orders = set()
    for seed in range(20):
        g = game([[None] * 9] * 5, stock=UNUSABLE, num_decks=1, reshuffle="all")
        g.rng = np.random.default_rng(seed)
        for _ in range(6):
            play(g, DRAW_STOCK)
        orders.add(tuple(g.stock))
    assert len(orders) > 1


def test_tightest_deck_reshuffle_never_leaves_the_stock_empty():
    # 5 layouts of 10 from one deck leave 2 cards. Stock + discard pile always hold those two at
    # the start of a turn, so "keep the top" still leaves one card to shuffle: the stock never
    # stays empty and the draw stays a decision (docs/rules.md's "only the discard top" case cannot
    # arise under validated rules).
    g = game([[None] * 10] * 5, stock=[Q, K], num_decks=1)
    assert g.stock == [K] and g.discard == [Q]
    mark = len(g.events)
    play(g, DRAW_STOCK)  # player 1 draws the King: the stock is empty
    assert since(g, mark) == [
        ("draw_stock", 1, K, -1),
        ("discard", 1, K, -1),
        ("reshuffle", -1, 1, -1),
    ]
    assert g.stock == [Q] and g.discard == [K]
    assert g.current == 2 and g.decision == Decision.DRAW
    play(g, TAKE_DISCARD)  # player 2 takes the King back: stock [Q], discard [K]
    assert g.stock == [Q] and g.discard == [K] and g.current == 3


def test_swap_then_the_wild_completes_the_layout_on_the_last_slot():
    # Layouts of 2. Turn 1: Jack on slot 1 (a Queen under it). Player 1 discards a King.
    # Turn 3: the Ace swaps with the Jack, which goes to slot 2, the last face-down slot.
    g = game([[Q, 9], [None] * 2], stock=[J, K, A])
    play(g, 0, DRAW_STOCK, DRAW_STOCK)
    assert g.decision == Decision.SWAP and g.legal_actions() == [0, DECLINE]
    mark = len(g.events)
    play(g, 0)
    assert since(g, mark)[:6] == [
        ("swap", 0, A, 0),
        ("pickup", 0, J, 0),
        ("wild", 0, J, 1),
        ("pickup", 0, 9, 1),
        ("round_won", 0, -1, -1),
        ("discard", 0, 9, -1),
    ]
    assert g.round_results == [(0,)]
