"""``env()``'s wrappers take a fused path for the common call; it must behave exactly like
PettingZoo's own chain (OrderEnforcing(AssertOutOfBounds(TerminateIllegal(raw_env)))), call by
call, on every kind of call: legal, illegal, out of bounds, odd types, dead steps, ``None`` for a
live agent, steps without a ``last()`` first, observing others, calls after the end. Where it
is stricter (odd action types, a step after the game) it refuses with nothing changed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import trash_env
from trash_env.env import ILLEGAL_REWARD


def plain_chain(**options):
    """The three wrappers as PettingZoo ships them, with none of env()'s fast paths."""
    inner = wrappers.TerminateIllegalWrapper(trash_env.raw_env(**options), ILLEGAL_REWARD)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(inner))


def call(env, name, *args):
    """What a call returns or raises, and what PettingZoo's logger warned meanwhile."""
    EnvLogger.mqueue.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = ("returned", getattr(env, name)(*args))
    except Exception as error:  # noqa: BLE001 - the exception is the outcome compared
        outcome = ("raised", type(error).__name__, str(error))
    return outcome, list(EnvLogger.mqueue)


def refused_alike(fast, plain) -> bool:
    """Where both chains refuse an action: PettingZoo's bare AssertionError, ours the
    InvalidActionError (an AssertionError too) naming the action and the allowed ones."""
    (fast_outcome, fast_log), (plain_outcome, plain_log) = fast, plain
    return (
        plain_outcome == ("raised", "AssertionError", "action is not in action space")
        and fast_outcome[:2] == ("raised", "InvalidActionError")
        and "not in the action space" in fast_outcome[2]
        and fast_log == plain_log
    )


def stricter(action) -> bool:
    """Actions PettingZoo's Discrete(13).contains lets through but env() refuses on purpose (a
    bool is not an action; a 0-d array is not an integer scalar): sent to env() alone."""
    return isinstance(action, (bool, np.bool_, np.ndarray))


def same(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b)
        )
    return type(a) is type(b) and a == b


def table(env) -> dict:
    """Everything a user can read off the env after reset."""
    bare = env.unwrapped
    return {
        name: getattr(bare, name)
        for name in (
            "agents",
            "agent_selection",
            "rewards",
            "_cumulative_rewards",
            "terminations",
            "truncations",
            "infos",
        )
    }


def pick_call(rng: np.random.Generator, env) -> tuple[str, tuple]:
    """A call, mostly the usual last() then a legal step, sometimes anything else."""
    bare = env.unwrapped
    agent = bare.agent_selection
    roll = rng.random()
    if roll < 0.35:
        return "last", ()
    if roll < 0.40:
        return "last", (False,)
    if roll < 0.45:
        return "observe", (str(rng.choice(bare.possible_agents)),)
    if roll < 0.47:
        return "step", (None,)
    if roll < 0.475:
        return "step", (int(rng.integers(13)),)  # often illegal: ends the game with -1
    if roll < 0.48:
        odd = (13, -1, 2.0, True, "10", np.int64(20), np.array(3), np.True_, None, 2.5)
        return "step", (odd[int(rng.integers(len(odd)))],)
    if not bare.agents or bare.terminations[agent] or bare.truncations[agent]:
        return "step", (None,)
    legal = np.flatnonzero(bare.observe(agent)["action_mask"])
    action = int(rng.choice(legal))
    kinds = (int, np.int64, np.int32, np.uint8, np.uint16)
    return "step", (kinds[int(rng.integers(len(kinds)))](action),)


@pytest.mark.parametrize(
    "options",
    [
        dict(num_players=2),
        dict(num_players=3, start_size=3, round_rewards=True),
        dict(num_players=2, start_size=2, call_trash=True, max_turns=60),
        dict(num_players=4, start_size=4, episode="round"),
    ],
    ids=["2p", "3p-round-rewards", "call-truncation", "4p-round-episode"],
)
def test_fused_wrapper_path_behaves_like_pettingzoos_chain(options):
    fast, plain = trash_env.env(**options), plain_chain(**options)
    rng = np.random.default_rng(7)
    for name, args in [("last", ()), ("step", (10,)), ("observe", ("player_0",))]:
        assert same(call(fast, name, *args), call(plain, name, *args)), name  # before reset
    calls = seed = 0
    while calls < 3000:
        assert same(call(fast, "reset", seed), call(plain, "reset", seed))
        seed += 1
        while plain.unwrapped.agents:
            name, args = pick_call(rng, plain)
            if name == "step" and stricter(args[0]):
                before = table(fast)
                outcome, _ = call(fast, name, *args)
                assert outcome[:2] == ("raised", "InvalidActionError"), (seed, args, outcome)
                assert repr(args[0]) in outcome[2] and "0 to 12" in outcome[2]
                assert same(table(fast), before)  # refused: nothing changed
                calls += 1
                continue
            fast_outcome, plain_outcome = call(fast, name, *args), call(plain, name, *args)
            assert same(fast_outcome, plain_outcome) or refused_alike(
                fast_outcome, plain_outcome
            ), (seed, name, args, fast_outcome, plain_outcome)
            assert same(table(fast), table(plain)), (seed, name, args)
            calls += 1
        # After the end: one more step. PettingZoo's chain warns and drops it; ours refuses
        # it (GameOverError) with nothing changed. Then the next deal.
        before = table(fast)
        outcome, warned = call(fast, "step", 0)
        assert outcome[:2] == ("raised", "GameOverError") and not warned, outcome
        assert call(plain, "step", 0)[1]  # PettingZoo's warning
        assert same(table(fast), before)


def test_fused_path_keeps_terminate_illegal_bookkeeping():
    """An illegal action is still caught by the mask the agent was shown, even when the
    agent's observation was fetched by observe() and not last()."""
    e = trash_env.env(num_players=2)
    e.reset(seed=3)
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert e.rewards[agent] == ILLEGAL_REWARD and all(e.terminations.values())


@pytest.mark.parametrize("kind", [np.uint64, np.uint32, np.int16, np.intc, np.longlong])
def test_every_numpy_integer_scalar_is_an_action(kind):
    """Deliberately broader than PettingZoo's chain, whose Discrete.contains refuses np.uint64
    (it cannot cast to int64 safely): any numpy integer scalar in range is the action it names."""
    e, plain = trash_env.env(num_players=2), trash_env.raw_env(num_players=2)
    e.reset(seed=5)
    plain.reset(seed=5)
    for _ in range(30):
        legal = np.flatnonzero(plain.observe(plain.agent_selection)["action_mask"])
        e.step(kind(legal[0]))
        plain.step(int(legal[0]))
        assert e.unwrapped.game.events == plain.game.events
        if plain.game.done:
            break
