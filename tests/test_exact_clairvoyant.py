"""The clairvoyant player (trash_env/exact/clairvoyant.py): per deal, its value against a
uniformly random beginner is the one a brute-force search of the real engine finds on the
same stacked deck."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.cards import build_deck
from trash_env.engine import Game
from trash_env.exact.clairvoyant import deal_values, win_rate
from trash_env.exact.model import Classes
from trash_env.rules import Rules


def brute_force(game: Game, seat: int, depth: int, memo: dict) -> float:
    """The clairvoyant's probability of winning by searching the engine itself: every legal
    move tried on a copy of the game, its own moves maximised and the beginner's averaged,
    at most ``depth`` decisions deep (0 beyond: the passes that can go on for ever make the
    search converge from below); a reshuffle counts as a loss."""
    if game.done:
        return 1.0 if game.round_results[-1] == (seat,) else 0.0
    if game.stock_known or depth == 0:
        return 0.0
    key = (
        tuple(tuple(row) for row in game.state),
        len(game.stock),
        tuple(game.discard[-1:]),
        game.held,
        int(game.decision),
        game.current,
        depth,
    )
    if key not in memo:
        values = []
        for action in game.legal_actions():
            child = game.clone(events=False)
            child.step(action)
            values.append(brute_force(child, seat, depth - 1, memo))
        mine = game.current == seat
        memo[key] = max(values) if mine else sum(values) / len(values)
    return memo[key]


@pytest.mark.parametrize("sizes", [(1, 1), pytest.param((1, 2), marks=pytest.mark.slow)])
def test_each_deals_value_is_the_engine_searched_by_brute_force(sizes):
    a, b = sizes
    rules = Rules(start_size=max(sizes), episode="round")
    classes = Classes(sizes, Rules())
    rng = np.random.default_rng(5)
    checked = unequal = 0
    for _ in range(6):
        order = [int(card) for card in rng.permutation(build_deck(1, False))]
        deal = np.array([classes.of(card) for card in order], dtype=np.int64)
        for first in (0, 1):
            for seat in (0, 1):
                game = Game(rules, seed=0, deals=[order], first_player=first, sizes=sizes)
                searched = brute_force(game, seat, 120, {})
                value, _ = deal_values(a, b, deal, classes.count, first, seat, 0.0)
                assert searched - 1e-12 <= value < searched + 1e-8  # the search: from below
                checked += 1
                unequal += 0.0 < value < 1.0
    assert checked == 24 and unequal >= 4  # the beginner's moves matter in some deals


def test_the_clairvoyant_beats_perfect_play_against_a_beginner():
    """Seeing every card is worth more than perfect play on public information: at (1, 1)
    optimal play wins 0.6488 against random (docs/skill.md); the clairvoyant far more."""
    found = win_rate((1, 1), 400, seed=3)
    low, high = found["win_rate"]
    assert low == high and low - 3 * found["standard_error"] > 0.6488
    with pytest.raises(ValueError, match="deals must be an integer of at least 2"):
        win_rate((1, 1), 1, seed=3)
