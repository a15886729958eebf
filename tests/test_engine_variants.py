"""The variants of docs/rules.md on stacked decks: which ranks are wild, jokers, losers reveal,
three free draws and the "Trash!" call."""

import pytest
from helpers import A, J, K, Q, game, play, since, slots

from trash_env.cards import JOKER
from trash_env.engine import (
    CALL_TRASH,
    DECLINE,
    DOWN,
    DRAW_STOCK,
    NATURAL,
    STAY_SILENT,
    WILD_UP,
    Decision,
)
from trash_env.rules import Rules

WILD_RANKS = {
    "jacks": {J},
    "kings": {K},
    "faces": {J, Q, K},
    "none": set(),
}


@pytest.mark.parametrize("wilds", sorted(WILD_RANKS))
@pytest.mark.parametrize("jokers", [False, True])
def test_wild_table(wilds, jokers):
    table = Rules(wilds=wilds, jokers=jokers).wild_table()
    expected = WILD_RANKS[wilds] | ({JOKER} if jokers else set())
    assert {rank for rank, wild in enumerate(table) if wild} == expected


@pytest.mark.parametrize("wilds", sorted(WILD_RANKS))
@pytest.mark.parametrize("card", [J, Q, K, JOKER])
def test_each_wilds_value_decides_which_face_cards_are_wild(wilds, card):
    # Turn 1 draws the card with ten face-down slots: a wild asks where to go, any other face
    # card is discarded and ends the turn. Jokers are wild whatever ``wilds`` says.
    g = game([[None] * 10, [None] * 10], stock=[card], wilds=wilds, jokers=True)
    if card == JOKER or card in WILD_RANKS[wilds]:
        assert g.decision == Decision.WILD and g.current == 0 and g.held == card
        assert g.legal_actions() == list(range(10))
        play(g, 6)
        assert g.layout[0][6] == card and g.state[0][6] == WILD_UP
    else:
        assert since(g, 1) == [("draw_stock", 0, card, -1), ("discard", 0, card, -1)]
        assert g.current == 1 and slots(g, 0) == [DOWN] * 10


@pytest.mark.parametrize("wilds", sorted(WILD_RANKS))
def test_uncovered_face_cards_follow_the_wilds_option(wilds):
    # The Ace uncovers a King: wild under "kings"/"faces", the end of the turn otherwise.
    g = game([[K, None, None], [None] * 3], stock=[A], wilds=wilds)
    if K in WILD_RANKS[wilds]:
        assert g.decision == Decision.WILD and g.held == K and g.legal_actions() == [1, 2]
    else:
        assert since(g, 1)[-2:] == [("pickup", 0, K, 0), ("discard", 0, K, -1)]


@pytest.mark.parametrize("players,decks", [(2, 1), (3, 2), (5, 3)])
def test_jokers_two_per_deck(players, decks):
    rules = Rules(num_players=players, jokers=True)
    assert rules.decks == decks
    assert rules.total_cards == 54 * decks
    g = game([[None] * 10] * players, jokers=True)
    assert g.totals[JOKER] == 2 * decks
    everything = g.stock + g.discard + [c for p in range(players) for c in g.layout[p][:10]]
    assert everything.count(JOKER) == 2 * decks
    assert Rules(num_players=players).wild_table()[JOKER] is False
    assert game([[None] * 10] * players).totals[JOKER] == 0


def test_joker_face_up_can_be_swapped_like_a_jack():
    g = game([[Q, Q, Q, 9, K], [None] * 5], stock=[JOKER, K, 3], jokers=True, wilds="none")
    play(g, 2)  # the joker on slot 3
    play(g, DRAW_STOCK)  # player 1: King
    play(g, DRAW_STOCK)  # player 0: the 3, whose slot holds the joker
    assert g.decision == Decision.SWAP and g.legal_actions() == [2, DECLINE]
    mark = len(g.events)
    play(g, 2)
    assert since(g, mark) == [("swap", 0, 3, 2), ("pickup", 0, JOKER, 2)]
    assert g.decision == Decision.WILD and g.legal_actions() == [0, 1, 3, 4]


def test_a_non_wild_face_card_in_its_slot_never_offers_a_swap():
    # With "kings" a Jack is not wild: a Jack drawn ends the turn even with wilds face-up.
    g = game([[Q, Q, Q, 9, K], [None] * 5], stock=[K, Q, J], wilds="kings")
    play(g, 2, DRAW_STOCK, DRAW_STOCK)
    assert g.state[0][2] == WILD_UP and g.layout[0][2] == K
    assert since(g, len(g.events) - 2) == [("draw_stock", 0, J, -1), ("discard", 0, J, -1)]


# --------------------------------------------------------------------------- losers reveal
# Player 0 wins on turn 1 ([2, 3, A] with an Ace on the stock); player 1 never played.
WIN_AT_ONCE = ([2, 3, A], [A])


def _reveal_game(loser_layout, **options):
    layout0, stock = WIN_AT_ONCE
    return game([layout0, loser_layout], stock=stock, **options)


def test_losers_reveal_shrinks_a_loser_whose_cards_are_all_in_place():
    g = _reveal_game([A, J, 3], losers_reveal=True)  # the Jack counts as correct
    reveals = [tuple(e) for e in g.events if e.kind == "reveal"]
    assert reveals == [("reveal", 1, A, 0), ("reveal", 1, J, 1), ("reveal", 1, 3, 2)]
    assert g.round_results == [(0, 1)] and g.sizes == [2, 2] and g.rounds_won == [1, 1]
    kinds = [e.kind for e in g.events]
    assert kinds.index("round_won") < kinds.index("reveal") < kinds.index("shrink")


@pytest.mark.parametrize(
    "layout",
    [[A, 2, 2], [3, 2, A], [A, 2, 9], [A, Q, 3]],
    ids=["duplicate", "swapped", "above-size", "non-wild-face"],
)
def test_losers_reveal_does_not_shrink_a_loser_with_a_wrong_card(layout):
    g = _reveal_game(layout, losers_reveal=True)
    assert [e.card for e in g.events if e.kind == "reveal"] == layout
    assert g.round_results == [(0,)] and g.sizes == [2, 3]


def test_without_losers_reveal_a_correct_loser_does_not_shrink():
    g = _reveal_game([A, J, 3])
    assert not any(e.kind == "reveal" for e in g.events)
    assert g.round_results == [(0,)] and g.sizes == [2, 3]


@pytest.mark.parametrize("wilds,card,shrinks", [("kings", K, True), ("kings", J, False)])
def test_losers_reveal_counts_wilds_by_the_rules(wilds, card, shrinks):
    g = _reveal_game([A, card, 3], losers_reveal=True, wilds=wilds)
    assert (1 in g.round_results[0]) is shrinks


def test_losers_reveal_only_face_down_cards_are_turned_up():
    # Player 1 starts: the 2 goes to slot 2, the King under it is discarded. Slots 1 and 3
    # hold an Ace and a 3. Then player 0 draws the Ace and wins.
    g = game([[2, 3, A], [A, K, 3]], stock=[2, A], first_player=1, losers_reveal=True)
    play(g, DRAW_STOCK)
    reveals = [tuple(e) for e in g.events if e.kind == "reveal"]
    assert reveals == [("reveal", 1, A, 0), ("reveal", 1, 3, 2)]
    assert g.round_results == [(0, 1)]


def test_losers_reveal_can_share_the_game_win():
    # Layouts of 1: player 0 completes the Ace slot, player 1's face-down card is an Ace.
    g = game([[5], [A]], stock=[A], losers_reveal=True)
    assert g.done and g.winners == (0, 1) and g.sizes == [0, 0]
    assert g.returns() == [0.0, 0.0] and g.placings == (1, 1)


def test_losers_reveal_in_a_one_deal_episode_all_shrinkers_win():
    g = _reveal_game([A, J, 3], losers_reveal=True, episode="round", num_players=2)
    assert g.done and g.winners == (0, 1)


# ----------------------------------------------------------------------------- free draws


def _free_draws_game(loser_layout, stock_after_win, **options):
    layout0, stock = WIN_AT_ONCE
    return game(
        [layout0, loser_layout],
        stock=stock + stock_after_win,
        losers_reveal=True,
        free_draws=3,
        **options,
    )


def test_free_draws_loser_completes_and_shrinks():
    # The loser's layout [K, A, Q]: free turn 1 draws a 2 (2 -> slot 2, Ace -> slot 1, the
    # King is discarded); free turn 2 draws the 3, which fills the last slot.
    g = _free_draws_game([K, A, Q], [2, 3])
    won = [e.kind for e in g.events].index("round_won")
    assert since(g, won) == [
        ("round_won", 0, -1, -1),
        ("discard", 0, A, -1),
        ("free_draws", 1, -1, -1),
    ]
    assert g.current == 1 and g.decision == Decision.DRAW
    mark = len(g.events)
    play(g, DRAW_STOCK)
    assert since(g, mark) == [
        ("draw_stock", 1, 2, -1),
        ("place", 1, 2, 1),
        ("pickup", 1, A, 1),
        ("place", 1, A, 0),
        ("pickup", 1, K, 0),
        ("discard", 1, K, -1),
    ]
    assert g.current == 1 and g.decision == Decision.DRAW  # the loser plays again
    mark = len(g.events)
    play(g, DRAW_STOCK)
    assert since(g, mark)[:6] == [
        ("draw_stock", 1, 3, -1),
        ("place", 1, 3, 2),
        ("pickup", 1, Q, 2),
        ("discard", 1, Q, -1),
        ("shrink", 0, -1, 2),
        ("shrink", 1, -1, 2),
    ]
    assert g.round_results == [(0, 1)]
    assert not any(e.kind == "reveal" for e in g.events)
    assert since(g, mark)[6] == ("deal", 0, -1, 1)  # the round's winner starts the next deal


@pytest.mark.parametrize("layout,shrinks", [([K, 2, 9], False), ([A, J, 3], True)])
def test_free_draws_three_turns_then_reveal(layout, shrinks):
    g = _free_draws_game(layout, [Q, K, Q])
    for _ in range(3):
        assert g.current == 1 and g.decision == Decision.DRAW and g.deal_number == 0
        play(g, DRAW_STOCK)
    kinds = [e.kind for e in g.events]
    free, next_deal = kinds.index("free_draws"), kinds.index("deal", 1)
    draws = [tuple(e) for e in g.events[free:next_deal] if e.kind == "draw_stock"]
    assert draws == [("draw_stock", 1, Q, -1), ("draw_stock", 1, K, -1), ("draw_stock", 1, Q, -1)]
    assert [e.card for e in g.events if e.kind == "reveal"] == layout
    assert g.round_results == [(0, 1) if shrinks else (0,)]
    assert g.deal_number == 1


def test_free_draws_need_no_call():
    # With call_trash the winner must call; the loser's completing free turn needs none.
    g = _free_draws_game([K, A, Q], [2, 3], call_trash=True)
    # The Ace's chain reaches the last slot of [2, 3, A]: the call decision comes first.
    assert g.decision == Decision.CALL and g.current == 0
    play(g, CALL_TRASH, DRAW_STOCK, DRAW_STOCK)
    assert g.round_results == [(0, 1)]
    assert [e.player for e in g.events if e.kind == "call"] == [0]


def test_without_free_draws_the_round_ends_at_once():
    g = _reveal_game([K, A, Q], losers_reveal=True)
    assert not any(e.kind == "free_draws" for e in g.events)
    assert g.deal_number == 1


# ---------------------------------------------------------------------------- call "Trash!"
# Layouts of 2; player 0 holds [2, A]: the Ace drawn goes to slot 1 and the 2 under it would
# fill the last slot.


def _call_game(layout1=(None, None), stock=(A, Q, K, Q)):
    return game([[2, A], list(layout1)], stock=list(stock), call_trash=True)


def test_call_decision_before_the_last_slot():
    g = _call_game()
    assert g.decision == Decision.CALL and g.current == 0
    assert g.legal_actions() == [CALL_TRASH, STAY_SILENT]
    assert g.held == 2 and slots(g, 0) == [NATURAL, DOWN]  # not laid yet
    g.check_invariants()


def test_calling_wins_the_round():
    g = _call_game()
    mark = len(g.events)
    play(g, CALL_TRASH)
    assert since(g, mark)[:6] == [
        ("call", 0, -1, -1),
        ("place", 0, 2, 1),
        ("pickup", 0, A, 1),
        ("round_won", 0, -1, -1),
        ("discard", 0, A, -1),
        ("shrink", 0, -1, 1),
    ]
    assert g.round_results == [(0,)]


def test_staying_silent_draws_a_penalty_and_claims_next_turn():
    g = _call_game()
    mark = len(g.events)
    play(g, STAY_SILENT)
    assert since(g, mark) == [
        ("place", 0, 2, 1),
        ("pickup", 0, A, 1),
        ("discard", 0, A, -1),
        ("penalty", 0, Q, -1),  # the stock's next card, straight onto the discard pile
    ]
    assert g.discard == [A, Q] and slots(g, 0) == [NATURAL, NATURAL]
    assert g.round_results == [] and g.sizes == [2, 2]
    assert g.current == 1 and g.decision == Decision.DRAW
    mark = len(g.events)
    play(g, DRAW_STOCK)  # player 1 draws the King
    assert since(g, mark)[:4] == [
        ("draw_stock", 1, K, -1),
        ("discard", 1, K, -1),
        ("claim", 0, -1, -1),
        ("round_won", 0, -1, -1),
    ]
    assert g.round_results == [(0,)] and g.sizes == [1, 2]


def test_someone_else_winning_first_beats_the_claim():
    # Player 0 stays silent; player 1 then completes [2, A] with the Ace and calls.
    g = _call_game(layout1=(2, A), stock=(A, Q, A))
    play(g, STAY_SILENT, DRAW_STOCK)
    assert g.decision == Decision.CALL and g.current == 1
    play(g, CALL_TRASH)
    assert g.round_results == [(1,)] and g.sizes == [2, 1]
    assert not any(e.kind == "claim" for e in g.events)


def test_wild_forced_on_the_last_slot_asks_for_the_call():
    # The 2 uncovers a Jack with one face-down slot left: the forced wild would complete.
    g = game([[K, J], [None, None]], stock=[2], call_trash=True)
    assert g.decision == Decision.CALL and g.held == J
    mark = len(g.events)
    play(g, CALL_TRASH)
    assert since(g, mark)[:4] == [
        ("call", 0, -1, -1),
        ("wild", 0, J, 0),
        ("pickup", 0, K, 0),
        ("round_won", 0, -1, -1),
    ]


def test_no_call_decision_without_the_option():
    g = game([[2, A], [None, None]], stock=[A])
    assert g.round_results == [(0,)]
    assert not any(e.kind == "call" for e in g.events)


@pytest.mark.parametrize("free_draws", [0, 3])
def test_beaten_claim_with_losers_reveal_still_shrinks(free_draws):
    # Player 0's layout is complete but unclaimed when player 1 wins: nothing is face-down, so
    # "losers reveal" finds it correct (and free draws have nothing left to complete).
    g = game(
        [[2, A], [2, A]],
        stock=[A, Q, A],
        call_trash=True,
        losers_reveal=True,
        free_draws=free_draws,
    )
    play(g, STAY_SILENT, DRAW_STOCK, CALL_TRASH)
    assert g.round_results == [(0, 1)] and g.sizes == [1, 1]
    assert not any(e.kind in ("claim", "free_draws", "reveal") for e in g.events)
