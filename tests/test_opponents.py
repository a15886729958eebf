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


def test_the_solo_env_and_a_batch_of_one_seat_the_same_tables() -> None:
    specs = ["random", "greedy", "counting"]
    solo = TrashSoloEnv(opponents=specs, num_players=4)
    batch = SoloBatch(1, specs, num_players=4)
    for episode in range(30):
        solo.reset(seed=episode)
        batch.rng = np.random.default_rng(episode)
        batch.reset_slots(np.arange(1))
        names = [None if a is None else a.spec for a in solo.table]
        assert int(batch.seats[0]) == solo.seat
        kinds = {"random": K.BOT_RANDOM, "greedy": K.BOT_GREEDY, "counting": K.BOT_COUNTING}
        expected = [K.BOT_LEARNER if s is None else kinds[s] for s in names]
        assert expected == batch.kinds[0, :4].tolist()
