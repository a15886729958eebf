"""The one reward assembly (trash_env.reward), and the compiled kernels' copy of its deal
payment held equal to it: a batch of games paid with ``VectorGame.payments`` and the same games
on the reference engine paid by ``Match`` (deal by deal, then the game) pay the same."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.match import Match
from trash_env.reward import ILLEGAL_REWARD, add_payments, deal_shares, learner_reward
from trash_env.rules import Rules
from trash_env.vector.batch import VectorGame


def test_payments_add_seat_by_seat_and_none_pays_nothing() -> None:
    assert add_payments(None, None) is None
    assert add_payments([1.0, -1.0], None) == [1.0, -1.0]
    assert add_payments(None, [0.5, -0.5]) == [0.5, -0.5]
    assert add_payments([1.0, -1.0], [-1.0, 1.0]) == [0.0, 0.0]
    assert add_payments(np.array([[1.0, -1.0]]), np.array([[1.0, -1.0]])).tolist() == [[2.0, -2.0]]
    assert add_payments(0.5, 0.25) == 0.75


def test_an_illegal_action_pays_the_forfeit_whatever_was_paid() -> None:
    assert learner_reward(0.5, False) == 0.5
    assert learner_reward(0.5, True) == ILLEGAL_REWARD
    out = learner_reward(np.array([0.5, 1.0, 0.0]), np.array([False, True, True]))
    assert out.tolist() == [0.5, -1.0, -1.0]


@pytest.mark.parametrize(
    "options",
    [
        {"start_size": 3},
        {"num_players": 4, "start_size": 3, "wilds": "faces"},
        {"num_players": 3, "start_size": 2, "max_turns": 60},
    ],
)
def test_the_kernels_deal_payments_equal_the_python_assembly(options: dict) -> None:
    rules = Rules(**options)
    size = 24
    batch = VectorGame(rules, size, seed=7)
    batch.reset()
    games = [batch.reference_game(i) for i in range(size)]
    matches = [Match(g, round_rewards=True) for g in games]
    paid = np.zeros((size, rules.num_players))
    choose = np.random.default_rng(3)
    deals = 0
    for _ in range(2000):
        if all(g.done for g in games):
            break
        masks = batch.action_masks()
        actions = np.array([choose.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        batch.step(actions)
        got = batch.payments(True)
        for i, (game, match) in enumerate(zip(games, matches, strict=True)):
            if game.done:  # paid once at its end (the batch pays it again until re-dealt)
                continue
            before = len(game.round_results)
            game.step(int(actions[i]))
            expected = match.settle()
            deals += len(game.round_results) - before
            want = np.zeros(rules.num_players) if expected is None else np.array(expected)
            assert got[i].tolist() == want.tolist(), (i, game.round_results)
            paid[i] += want
    assert deals > size  # deals did end, and were paid
    for i, game in enumerate(games):
        shares = deal_shares(game, 0)
        total = add_payments(shares, None if game.truncated else game.returns())
        assert np.allclose(paid[i], total)
