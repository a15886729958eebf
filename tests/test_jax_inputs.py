"""Hostile inputs to the JAX env (issue 41, items 8 and 10), grouped by surface: the
unchecked step and observe (what docs/jax.md, "Inputs", says they do, tested here), the
checked mode that refuses what the PettingZoo env refuses, and the import without JAX."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="needs jax (the jax extra)")

# Each test compiles the JAX engine: the second tier (`pytest -m slow`), as tests/test_jax_env.py.
pytestmark = pytest.mark.slow

from trash_env.jax_env import checked, make  # noqa: E402
from trash_env.jax_env.env import integer_input  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ENV = make(num_players=2)
STEP = jax.jit(ENV.step)
OBSERVE = jax.jit(ENV.observe)


@pytest.fixture(scope="module")
def state():
    return ENV.init(jax.random.PRNGKey(3))


def _legal(state) -> int:
    return int(np.flatnonzero(np.asarray(state.legal_action_mask))[0])


# ---------------------------------------------------------------------------- unchecked step


@pytest.mark.parametrize(
    "action",
    [10.7, 10.0, np.float32(3), True, np.bool_(False), np.array([1, 2]), "3", None],
    ids=["10.7", "10.0", "float32", "True", "np.False_", "array", "str", "None"],
)
def test_the_step_refuses_what_is_not_one_integer_instead_of_casting_it(state, action):
    with pytest.raises(ValueError, match="action must be one integer per game"):
        ENV.step(state, action)  # refused before any work
    if not isinstance(action, str):  # jit itself refuses a string (TypeError), as the docs say
        with pytest.raises(ValueError, match="action must be one integer per game"):
            STEP(state, action)


def test_an_out_of_range_integer_ends_the_game_as_an_illegal_action(state):
    for action in (13, -1, 2**31 - 1, np.uint32(2**32 - 1)):
        after = STEP(state, action)
        assert bool(after.terminated), action
        assert float(after.rewards[int(state.current_player)]) == -1.0


def test_under_jit_jax_narrows_a_64_bit_integer_as_the_docs_say(state):
    """docs/jax.md: without x64, JAX converts an int64 to int32 at the jitted call, before the
    step sees it: 2**40 + a plays as a. The checked mode refuses it (below)."""
    legal = _legal(state)
    wrapped = STEP(state, np.int64(2**40 + legal))
    played = STEP(state, legal)
    assert not bool(wrapped.terminated)
    np.testing.assert_array_equal(wrapped.observation, played.observation)


def test_a_concrete_or_64_bit_integer_is_compared_at_its_own_width():
    """Outside jit (concrete) and with x64 on (traced int64), 2**40 + 10 is out of range."""
    for value in (np.int64(2**40 + 10), 2**40 + 10, np.uint64(2**63)):
        _, ok = integer_input(value, 13, "action")
        assert not bool(ok), value
    code = textwrap.dedent(
        """
        import jax, numpy as np
        jax.config.update("jax_enable_x64", True)
        from trash_env.jax_env.env import integer_input
        check = jax.jit(lambda a: integer_input(a, 13, "action"))
        value, ok = check(np.int64(2**40 + 10))
        assert value.dtype == np.int32 and not bool(ok), (value, ok)
        value, ok = check(np.int64(10))
        assert int(value) == 10 and bool(ok)
        print("compared at 64 bits")
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.stdout.strip() == "compared at 64 bits", result.stderr[-2000:]


# ---------------------------------------------------------------------------- unchecked observe


@pytest.mark.parametrize("player", [7, -1, 2, np.int64(2**40)])
def test_an_out_of_range_player_id_sees_nan_never_another_seat(state, player):
    assert np.isnan(np.asarray(ENV.observe(state, player))).all()  # concrete, not jitted
    if not isinstance(player, np.int64):  # jit narrows an int64 first (the docs say so)
        assert np.isnan(np.asarray(OBSERVE(state, player))).all()


def test_a_seat_of_the_table_sees_its_own_observation(state):
    actor = int(state.current_player)
    np.testing.assert_array_equal(OBSERVE(state, actor), state.observation)
    other = np.asarray(OBSERVE(state, 1 - actor))
    assert np.isfinite(other).all() and not np.array_equal(other, state.observation)


@pytest.mark.parametrize("player", [1.0, True, "0", np.array([0, 1])])
def test_a_player_id_that_is_not_one_integer_is_refused(state, player):
    with pytest.raises(ValueError, match="player_id must be one integer per game"):
        ENV.observe(state, player)


# ---------------------------------------------------------------------------- checked mode


@pytest.fixture(scope="module")
def batch():
    env = checked(ENV)
    return env, env.init(jax.random.split(jax.random.PRNGKey(5), 4))


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (np.int64(2**40 + 10), r"action \[1099511627786\] out of range"),
        (13, r"action \[13\] out of range: an action is an integer from 0 to 12"),
        (-1, r"action \[-1\] out of range"),
        (10.7, "action 10.7 is not an integer"),
        (True, "action True is not an integer"),
        (np.bool_(True), "is not an integer"),
        ("3", "action '3' is not an integer"),
        ([1, True], "is not an integer"),
        (np.array([1, 2]), r"action must have the shape \(\)"),
    ],
)
def test_the_checked_mode_refuses_what_the_pettingzoo_env_refuses(state, action, message):
    env = checked(ENV)
    with pytest.raises(ValueError, match=message):
        env.step(state, action)


@pytest.mark.parametrize("player", [7, -1, 2, 1.0, True, np.int64(2**40)])
def test_the_checked_mode_refuses_a_player_id_outside_the_table(state, player):
    with pytest.raises(ValueError, match="player_id"):
        checked(ENV).observe(state, player)


def test_the_checked_mode_plays_a_batch_and_an_illegal_in_range_action_ends_the_game(batch):
    env, states = batch
    masks = np.asarray(states.legal_action_mask)
    legal = masks.argmax(axis=1)
    after = env.step(states, legal)
    assert not np.asarray(after.terminated).any()
    assert (np.asarray(after._step_count) == 1).all()
    illegal = (~masks).argmax(axis=1)
    ended = env.step(states, illegal)
    assert np.asarray(ended.terminated).all()
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        env.step(states, legal[:3])
    with pytest.raises(ValueError, match="out of range"):
        env.step(states, np.where(np.arange(4) == 2, 2**40, legal))
    seen = env.observe(states, np.array([0, 1, 0, 1]))
    assert seen.shape == states.observation.shape and np.isfinite(np.asarray(seen)).all()


# ---------------------------------------------------------------------------- import


def test_importing_the_jax_env_without_jax_names_the_extra_in_one_line():
    code = textwrap.dedent(
        """
        import importlib.abc, sys

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("jax", "jaxlib"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Block())
        try:
            import trash_env.jax_env
        except ModuleNotFoundError as error:
            print(error)
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.stdout == "trash_env.jax_env needs JAX: pip install 'trash-env[jax]'\n"
    assert result.stderr == ""
