"""Odd inputs to the batched engine and its envs: actions outside 0..14, floats, bools and
integers too big for int64 are refused with the legal range, wrong shapes with the expected
one; numpy integers count as integers; the batched invariant check names what broke."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.engine import DRAW_STOCK, InvariantError
from trash_env.rules import Rules
from trash_env.vector import TrashVecEnv, TrashVectorEnv, VectorGame
from trash_env.vector.batch import VIOLATIONS


@pytest.mark.parametrize(
    "actions",
    [
        [200, 10, 10],
        [-1, 10, 10],
        [10.7, 10, 10],
        [10.0, 10, 10],
        [2**70, 10, 10],
        [True, False, True],
        [True, 1, 1],  # np.asarray reads this list as integers: its elements are checked
        (10, np.True_, 10),
        np.full(3, 2**63, np.uint64),
        ["10", "10", "10"],
    ],
    ids=repr,
)
def test_vector_game_refuses_what_is_not_an_engine_action(actions):
    batch = VectorGame(Rules(), 3, seed=0)
    before = batch.games.tobytes()
    with pytest.raises(ValueError, match="actions must be integers from 0 to 14"):
        batch.step(actions)
    assert batch.games.tobytes() == before


@pytest.mark.parametrize("shape", [(2,), (4,), (3, 1), (1, 3), ()])
def test_vector_game_refuses_wrong_shapes(shape):
    batch = VectorGame(Rules(), 3, seed=0)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        batch.step(np.full(shape, DRAW_STOCK))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64, np.int64])
def test_vector_game_takes_integers_of_any_kind(dtype):
    one, other = VectorGame(Rules(), 3, seed=0), VectorGame(Rules(), 3, seed=0)
    legal = one.step(np.full(3, DRAW_STOCK, dtype))
    assert legal.tolist() == other.step([DRAW_STOCK] * 3).tolist()
    assert one.games.tobytes() == other.games.tobytes()


@pytest.mark.parametrize("env_class", [TrashVecEnv, TrashVectorEnv])
@pytest.mark.parametrize(
    "actions", [[True, 0, 0, 0], (0, 0, np.False_, 0), np.ones(4, bool), [0.0, 0, 0, 0]], ids=repr
)
def test_vector_envs_refuse_bools_and_floats_even_inside_a_list(env_class, actions):
    env = env_class(4, seed=0)
    env.reset()
    before = env.core.batch.games.tobytes()
    with pytest.raises(ValueError, match="actions must be integers from 0 to 12, got"):
        env.step(actions)
    assert env.core.batch.games.tobytes() == before
    env.step([0, 0, 0, 0])  # a list of plain integers is taken


@pytest.mark.parametrize("env_class", [TrashVecEnv, TrashVectorEnv])
@pytest.mark.parametrize("shape", [(4, 1), (2, 2), (1, 4), (8,)])
def test_vector_envs_refuse_wrong_action_shapes(env_class, shape):
    env = env_class(4, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(np.zeros(shape, np.int64))


@pytest.mark.parametrize("env_class", [TrashVecEnv, TrashVectorEnv])
def test_vector_envs_take_a_numpy_count(env_class):
    env = env_class(np.int64(4), seed=0)
    assert env.num_envs == 4 and type(env.num_envs) is int


@pytest.mark.parametrize("count", [True, np.True_, 2.0, 0, "4"])
def test_vector_envs_refuse_odd_counts(count):
    with pytest.raises(ValueError, match="num_envs must be a positive integer"):
        TrashVecEnv(count)


@pytest.mark.parametrize(
    "corrupt,broken",
    [
        (lambda r: r["hidden"].__setitem__(5, r["hidden"][5] + 1), "hidden counts"),
        (lambda r: r["layout"].__setitem__((0, 0), 99), "not a card"),
        (lambda r: r["face_down"].__setitem__(0, r["face_down"][0] - 1), "face-down count"),
        (lambda r: r.__setitem__("nstock", r["nstock"] - 1), "cards not conserved"),
    ],
)
def test_vector_check_invariants_names_the_broken_game_and_rule(corrupt, broken):
    batch = VectorGame(Rules(), 4, seed=0)
    batch.check_invariants()
    assert batch.violations().tolist() == [0, 0, 0, 0]
    corrupt(batch.games[2])
    codes = batch.violations()
    assert codes[[0, 1, 3]].tolist() == [0, 0, 0] and broken in VIOLATIONS[codes[2] - 1]
    with pytest.raises(InvariantError, match=rf"game 2 of 4 .*{broken}"):
        batch.check_invariants()


def test_vec_env_step_wait_without_step_async_says_so():
    env = TrashVecEnv(2, seed=0)
    env.reset()
    with pytest.raises(RuntimeError, match=r"call step_async\(actions\) before step_wait\(\)"):
        env.step_wait()
