"""The one opponent pool (trash_env.opponents) that the solo and the batched envs seat from."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.opponents import LEARNER, OpponentPool
from trash_env.solo import TrashSoloEnv
from trash_env.vector import _kernels as K
from trash_env.vector.env import SoloBatch


def test_a_table_is_the_learner_seat_then_one_entry_per_opponent_seat_in_order() -> None:
    pool = OpponentPool(["a", "b", "c"])
    seats, table = pool.draw(np.random.default_rng(5), 200, 4, None)
    again = np.random.default_rng(5)
    # the seats first, then every table's opponents, scalar by scalar (the solo env's stream)
    assert seats.tolist() == [int(again.integers(4)) for _ in range(200)]
    for seat, row in zip(seats.tolist(), table.tolist(), strict=True):
        expected = [LEARNER if p == seat else int(again.integers(3)) for p in range(4)]
        assert row == expected
    assert set(seats.tolist()) == {0, 1, 2, 3}
    assert set(table[table != LEARNER].tolist()) == {0, 1, 2}
    fixed, table = pool.draw(np.random.default_rng(5), 50, 3, 2)
    assert (fixed == 2).all() and (table[:, 2] == LEARNER).all() and (table[:, :2] >= 0).all()


def test_entries_are_checked_and_named() -> None:
    assert OpponentPool("greedy").specs == ["greedy"]
    with pytest.raises(ValueError, match="at least one opponent"):
        OpponentPool([])
    with pytest.raises(ValueError, match="spec strings or Agent objects, got 3"):
        OpponentPool(["random", 3])
    with pytest.raises(ValueError, match="or stable-baselines3 policies, got 3"):
        OpponentPool(["random", 3], policies=True)


def test_both_envs_seat_their_tables_with_the_pool_draw() -> None:
    specs = ["random", "greedy", "counting"]
    kinds = {"random": K.BOT_RANDOM, "greedy": K.BOT_GREEDY, "counting": K.BOT_COUNTING}
    solo = TrashSoloEnv(opponents=specs, num_players=4)
    batch = SoloBatch(8, specs, num_players=4)
    pool = OpponentPool(specs)
    for episode in range(20):
        solo.reset(seed=episode)
        seats, table = pool.draw(np.random.default_rng(episode), 1, 4, None)
        assert solo.seat == int(seats[0])
        assert [None if a is None else a.spec for a in solo.table] == [
            None if j == LEARNER else specs[j] for j in table[0].tolist()
        ]
        batch.rng = np.random.default_rng(episode)
        seats, table = pool.draw(np.random.default_rng(episode), 8, 4, None, every_seat=True)
        batch.reset_slots(np.arange(8))
        assert batch.seats.tolist() == seats.tolist()
        expected = [
            [K.BOT_LEARNER if j == LEARNER else kinds[specs[j]] for j in row] for row in table
        ]
        assert batch.kinds[:, :4].tolist() == expected


def test_every_seat_draws_the_learners_entry_too_and_drops_it() -> None:
    pool = OpponentPool(["a", "b", "c"])
    seats, table = pool.draw(np.random.default_rng(2), 50, 3, None, every_seat=True)
    again = np.random.default_rng(2)
    assert seats.tolist() == again.integers(3, size=50).tolist()
    raw = again.integers(3, size=(50, 3))
    raw[np.arange(50), seats] = LEARNER
    assert table.tolist() == raw.tolist()
