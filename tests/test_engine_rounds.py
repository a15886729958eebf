"""Rounds and the game on stacked decks: round wins, shrinking layouts, who starts, game end,
target size, fixed deals, placings, truncation, one-deal episodes and returns (docs/rules.md,
"Rounds and the game" and the variants that change them)."""

import math
from collections import Counter

import pytest
from helpers import A, J, K, Q, game, play, since, slots, stacked_game

from trash_env.cards import JOKER
from trash_env.engine import ABSENT, DOWN, DRAW_STOCK, NATURAL, TAKE_DISCARD, Decision, Game
from trash_env.rules import Rules


def _deals(g):
    """(deal number, first player) of every deal so far."""
    return [(e.slot, e.player) for e in g.events if e.kind == "deal"]


def test_round_winner_shrinks_and_the_next_deal_uses_the_new_sizes():
    rules = Rules(start_size=3)
    g = stacked_game(
        rules,
        [
            ([[2, 3, A], [None] * 3], [A]),  # player 0 fills all three slots on turn 1
            ([[None] * 2, [9, 8, K]], [3]),  # deal 2: player 0 (layout of 2) draws a 3
        ],
    )
    assert g.round_results == [(0,)] and g.sizes == [2, 3] and g.rounds_won == [1, 0]
    assert g.deal_number == 1 and not g.done
    assert _deals(g) == [(0, 0), (1, 0)]  # the winner plays first in the next deal
    assert g.state[0] == [DOWN, DOWN] + [ABSENT] * 8
    assert g.state[1] == [DOWN] * 3 + [ABSENT] * 7
    # The 3 has no slot in a layout of 2: it ends player 0's turn...
    i = [e.kind for e in g.events].index("deal", 1)
    assert since(g, i + 1) == [("draw_stock", 0, 3, -1), ("discard", 0, 3, -1)]
    # ... but fits player 1's layout of 3.
    play(g, TAKE_DISCARD)
    assert slots(g, 1) == [DOWN, DOWN, NATURAL]


def test_standard_game_ends_with_a_won_one_card_layout():
    rules = Rules(start_size=2)
    g = stacked_game(
        rules,
        [
            ([[2, A], [None] * 2], [A]),  # deal 1: player 0 wins at once
            ([[None], [2, A]], [K, A]),  # deal 2: player 0 discards a King, player 1 wins
            ([[None], [J]], [A]),  # deal 3: player 1 starts and completes the Ace slot
        ],
    )
    assert g.round_results == [(0,)] and g.sizes == [1, 2] and not g.done
    play(g, DRAW_STOCK)
    # Deal 2 went to player 1; deal 3 was played at once by player 1 (its winner): the Ace
    # on slot 1, with the Jack under it, completes a 1-card layout and ends the game.
    assert g.round_results == [(0,), (1,), (1,)]
    assert _deals(g) == [(0, 0), (1, 0), (2, 1)]
    assert g.done and not g.truncated
    assert g.sizes == [1, 0] and g.rounds_won == [1, 2]
    assert g.winners == (1,)
    assert g.returns() == [-1.0, 1.0]
    assert g.placings == (2, 1)
    assert since(g, len(g.events) - 5) == [
        ("pickup", 1, J, 0),
        ("round_won", 1, -1, -1),
        ("discard", 1, J, -1),
        ("shrink", 1, -1, 0),
        ("game_over", -1, 1, -1),
    ]
    assert g.decision == Decision.NONE and g.legal_actions() == []
    with pytest.raises(ValueError, match="game is over"):
        g.step(DRAW_STOCK)


def test_game_ends_at_size_zero():
    g = game([[5], [None]], stock=[A])
    assert g.done and g.winners == (0,) and g.sizes == [0, 1]
    assert g.events[-1] == ("game_over", -1, 1, -1)


def test_no_shrink_and_no_game_end_for_the_loser():
    g = game([[2, 3, A], [None] * 3], stock=[A])
    assert g.sizes == [2, 3] and g.rounds_won == [1, 0] and not g.done
    assert g.returns() == [0.0, 0.0]  # nothing is paid out while the game runs


def _three_player_deal_won_by_player_2(**options):
    # Player 0 discards a Queen, player 1 a King, player 2 draws an Ace into [2, A] and wins.
    rules = Rules(num_players=3, start_size=2, **options)
    return rules, ([[None] * 2, [None] * 2, [2, A]], [Q, K, A])


def test_first_player_winner_starts_the_next_deal():
    rules, deal = _three_player_deal_won_by_player_2(first_player="winner")
    g = stacked_game(rules, [deal])
    play(g, DRAW_STOCK, DRAW_STOCK)
    assert g.round_results == [(2,)]
    assert _deals(g) == [(0, 0), (1, 2)]


def test_first_player_rotate_moves_clockwise_whoever_won():
    rules, deal = _three_player_deal_won_by_player_2(first_player="rotate")
    # Deal 2: player 1 starts (rotation) and wins at once; deal 3 goes to player 2, not 1.
    deal2 = ([[None] * 2, [2, A], [None]], [A])
    deal3 = ([[None] * 2, [None], [None]], [K])  # player 2 discards a King
    g = stacked_game(rules, [deal, deal2, deal3])
    play(g, DRAW_STOCK, DRAW_STOCK)
    assert g.round_results == [(2,), (1,)]
    assert _deals(g) == [(0, 0), (1, 1), (2, 2)]
    assert since(g, len(g.events) - 2) == [("draw_stock", 2, K, -1), ("discard", 2, K, -1)]


@pytest.mark.parametrize("players", range(2, 7))
def test_decks_per_player_count(players):
    rules = Rules(num_players=players)
    decks = math.ceil(players / 2)
    assert rules.decks == decks and rules.total_cards == 52 * decks
    g = Game(rules, seed=players)
    cards = Counter(g.stock) + Counter(g.discard) + Counter([g.held] if g.held >= 0 else [])
    for p in range(players):
        cards += Counter(g.layout[p][: g.sizes[p]])
    assert cards == Counter({rank: 4 * decks for rank in range(1, 14)})
    g.check_invariants()


@pytest.mark.parametrize("num_decks", [1, 2, 3])
def test_num_decks_overrides_the_count(num_decks):
    for jokers in (False, True):
        rules = Rules(num_players=2, num_decks=num_decks, jokers=jokers)
        g = Game(rules, seed=0)
        assert g.totals[1:] == [4 * num_decks] * 13
        assert g.totals[JOKER] == (2 * num_decks if jokers else 0)
        assert len(g.stock) + len(g.discard) + (g.held >= 0) + 20 == 52 * num_decks + (
            2 * num_decks if jokers else 0
        )
        assert sum(g.hidden_counts()) == len(g.stock) + sum(g.face_down_count(p) for p in (0, 1))


@pytest.mark.parametrize("target,done", [(2, True), (1, False)])
def test_target_size_ends_the_game(target, done):
    g = game([[2, 3, A], [None] * 3], stock=[A], target_size=target)
    assert g.sizes == [2, 3]
    assert g.done is done
    if done:
        assert g.winners == (0,) and g.returns() == [1.0, -1.0]


def _fixed_deals(max_deals):
    # Deal 1: player 0 wins. Deal 2 (player 0 first): player 0 discards a King, player 1 wins.
    rules = Rules(num_players=3, start_size=2, max_deals=max_deals)
    return stacked_game(
        rules,
        [
            ([[2, A], [None] * 2, [None] * 2], [A]),
            ([[None], [2, A], [None] * 2], [K, A]),
            ([[None], [None], [None] * 2], [K]),  # deal 3 (if any): player 1 discards a King
        ],
    )


def test_max_deals_smallest_layout_wins():
    g = _fixed_deals(1)
    assert g.done and g.deal_number == 1
    assert g.winners == (0,) and g.returns() == [1.0, -0.5, -0.5]


def test_max_deals_equal_smallest_layouts_share_the_win():
    g = _fixed_deals(2)
    assert not g.done
    play(g, DRAW_STOCK)
    assert g.done and g.deal_number == 2 and g.sizes == [1, 1, 2]
    assert g.winners == (0, 1)
    assert g.returns() == pytest.approx([0.25, 0.25, -0.5])
    assert g.placings == (1, 1, 3)


def test_without_max_deals_the_game_goes_on():
    g = _fixed_deals(None)
    play(g, DRAW_STOCK)
    assert not g.done and g.deal_number == 2 and g.sizes == [1, 1, 2]


def test_final_placings_by_face_down_slots_left():
    # 4 players, layouts of 3, the game ends at size 2 (the first round win). Player 1 starts.
    # P1: Ace -> slot 1 (King under it): 2 face-down left.  P2: Queen: 3 left.
    # P3: 2 -> slot 2 (King): 2 left.  P0: Ace into [2, 3, A]: wins.
    g = game(
        [[2, 3, A], [K, None, None], [None] * 3, [None, K, None]],
        stock=[A, Q, 2, A],
        first_player=1,
        target_size=2,
    )
    play(g, DRAW_STOCK, DRAW_STOCK, DRAW_STOCK)
    assert g.done and g.winners == (0,)
    assert [g.face_down_count(p) for p in range(4)] == [0, 2, 3, 2]
    assert g.placings == (1, 2, 4, 2)  # ties share a place
    assert g.returns() == pytest.approx([1.0, -1 / 3, -1 / 3, -1 / 3])


def test_truncation_at_max_turns():
    g = game([[None] * 10, [None] * 10], stock=[Q, K, Q, K], max_turns=3)
    assert g.turns == 1
    play(g, DRAW_STOCK)
    assert not g.done and g.turns == 2
    g.step(DRAW_STOCK)
    assert g.done and g.truncated and g.turns == 3
    assert g.winners == () and g.placings is None
    assert g.returns() == [0.0, 0.0]
    assert g.events[-1] == ("truncated", -1, -1, -1)
    assert g.decision == Decision.NONE and g.legal_actions() == []


def test_episode_round_ends_after_one_deal():
    g = game([[2, 3, A], [None] * 3], stock=[A], episode="round")
    assert g.done and not g.truncated and g.deal_number == 1
    assert g.winners == (0,) and g.returns() == [1.0, -1.0] and g.placings == (1, 2)
    assert g.sizes == [2, 3]


def test_episode_game_plays_on():
    g = game([[2, 3, A], [None] * 3], stock=[A], episode="game")
    assert not g.done and g.deal_number == 1


@pytest.mark.parametrize("n", range(2, 7))
def test_returns_zero_sum_and_shared_win_formula(n):
    g = Game(Rules(num_players=n), seed=0)
    assert g.returns() == [0.0] * n
    for k in range(1, n + 1):
        winners = tuple(range(k))
        r = g.shares_to_returns(winners)
        assert sum(r) == pytest.approx(0.0, abs=1e-12)
        for p in range(n):
            expected = (n / k - 1) / (n - 1) if p < k else -1 / (n - 1)
            assert r[p] == pytest.approx(expected)
    assert g.shares_to_returns((0,)) == pytest.approx([1.0] + [-1 / (n - 1)] * (n - 1))
    assert g.shares_to_returns(tuple(range(n))) == pytest.approx([0.0] * n)


def test_first_player_of_the_first_round_is_drawn_by_the_rng():
    starters = {Game(Rules(num_players=4), seed=s).events[0].player for s in range(40)}
    assert starters == {0, 1, 2, 3}
    rules = Rules(num_players=4)
    assert Game(rules, seed=7).events[0] == Game(rules, seed=7).events[0]
