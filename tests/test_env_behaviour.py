"""The env's own promises: rewards, infos, illegal actions, truncation, calls, state, options,
observation caching, pickling and the renders."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pytest

import trash_env
from trash_env.cards import card_short
from trash_env.engine import CALL_TRASH, DRAW_STOCK, Decision
from trash_env.observation import (
    SEAT_FEATURES,
    action_mask,
    encode_observation,
    encode_state,
    state_size,
)
from trash_env.render import image_size, render_text


def decision_slice(n: int) -> slice:
    # decision one-hot: after seats, discard top (15), held (15), visible (14), wild ranks (14)
    start = n * SEAT_FEATURES + 15 + 15 + 14 + 14
    return slice(start, start + len(Decision))


def play_random(e, rng, until=None):
    """Random legal actions (None for finished agents) until ``until(e)`` or no agents."""
    while e.agents and not (until and until(e)):
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def step_random(e, rng):
    obs, *_ = e.last()
    action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
    e.step(action)
    return action


def ansi_env_after(num_players: int, seed: int, steps: int):
    """An ``ansi``-rendering env ``steps`` random legal moves after ``reset(seed=seed)``."""
    e = trash_env.raw_env(num_players=num_players, render_mode="ansi")
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        step_random(e, rng)
    return e


# ---------------------------------------------------------------------- rewards and infos


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_game_end_rewards_placings_and_infos(n):
    e = trash_env.raw_env(num_players=n, start_size=4)
    rng = np.random.default_rng(n)
    for seed in range(3):
        e.reset(seed=seed)
        game = e.game
        while not game.done:
            step_random(e, rng)
            if not game.done:
                assert all(r == 0 for r in e.rewards.values()), "reward before the game's end"
                for p, agent in enumerate(e.possible_agents):  # same keys, no result yet
                    info = e.infos[agent]
                    assert info["placing"] == 0 and info["truncated"] is False
                    assert info["winners"].tolist() == [0] * n
                    assert info["rounds_won"] == game.rounds_won[p]
        returns = game.returns()
        assert [e.rewards[a] for a in e.possible_agents] == pytest.approx(returns)
        assert abs(sum(returns)) < 1e-9 and max(returns) > 0
        assert all(e.terminations.values()) and not any(e.truncations.values())
        mask = [int(p in game.winners) for p in range(n)]
        for p, agent in enumerate(e.possible_agents):
            info = e.infos[agent]
            assert info["placing"] == game.placings[p]
            assert info["winners"].dtype == np.int8 and info["winners"].tolist() == mask
            assert info["rounds_won"] == game.rounds_won[p]
            assert info["truncated"] is False
            assert (info["placing"] == 1) == bool(mask[p])
        # Dead steps remove every agent; each sees its final reward once in last().
        seen = {}
        while e.agents:
            agent = e.agent_selection
            _, reward, term, _, _ = e.last()
            assert term
            seen[agent] = reward
            e.step(None)
        assert seen == pytest.approx(dict(zip(e.possible_agents, returns, strict=True)))


def test_round_rewards_pay_every_deal_and_the_game():
    e = trash_env.raw_env(num_players=3, start_size=5, round_rewards=True)
    rng = np.random.default_rng(1)
    for seed in range(4):
        e.reset(seed=seed)
        game = e.game
        totals = np.zeros(3)
        deals_seen = 0
        while not game.done:
            step_random(e, rng)
            step_rewards = np.array([e.rewards[a] for a in e.possible_agents])
            assert abs(step_rewards.sum()) < 1e-9
            expected = np.zeros(3)
            for shrinkers in game.round_results[deals_seen:]:
                expected += game.shares_to_returns(shrinkers)
            deals_seen = len(game.round_results)
            if game.done:
                expected += game.returns()
            assert step_rewards == pytest.approx(expected)
            totals += step_rewards
        assert len(game.round_results) >= 5  # start_size 5: at least five deals
        by_deal = sum(np.array(game.shares_to_returns(s)) for s in game.round_results)
        assert totals == pytest.approx(by_deal + np.array(game.returns()))


def test_round_rewards_off_pays_only_at_the_end():
    e = trash_env.raw_env(num_players=2, start_size=3)
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    deals_before = 0
    while not e.game.done:
        step_random(e, rng)
        if not e.game.done and len(e.game.round_results) > deals_before:
            deals_before = len(e.game.round_results)
            assert all(r == 0 for r in e.rewards.values())
    assert deals_before >= 1


def test_cumulative_reward_reaches_each_agent_once():
    """A deal reward earned on another agent's step shows in the agent's own last()."""
    e = trash_env.raw_env(num_players=4, start_size=3, round_rewards=True)
    rng = np.random.default_rng(5)
    e.reset(seed=5)
    received = dict.fromkeys(e.possible_agents, 0.0)
    earned = dict.fromkeys(e.possible_agents, 0.0)
    while e.agents:
        _, reward, term, trunc, _ = e.last()
        received[e.agent_selection] += reward
        if term or trunc:
            e.step(None)
        else:
            step_random(e, rng)
            for a, r in e.rewards.items():
                earned[a] += r
    assert received == pytest.approx(earned)
    assert any(v != 0 for v in earned.values())


# ---------------------------------------------------------------------- illegal actions


def test_illegal_action_in_env_terminates_with_minus_one():
    e = trash_env.env(num_players=3)
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(10):
        step_random(e, rng)
    offender = e.agent_selection
    mask = e.last()[0]["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1
    assert all(r == 0 for a, r in e.rewards.items() if a != offender)
    rewards = {}
    while e.agents:
        agent = e.agent_selection
        rewards[agent] = e.last()[1]
        e.step(None)
    assert rewards[offender] == -1 and len(rewards) == 3


def test_illegal_action_in_raw_env_names_the_legal_actions():
    e = trash_env.raw_env(num_players=2)
    e.reset(seed=1)
    while e.game.decision != Decision.DRAW:
        step_random(e, np.random.default_rng(0))
    before = e.observe(e.agent_selection)["observation"].copy()
    with pytest.raises(ValueError, match=r"legal actions: 10 \(draw from stock\), 11"):
        e.step(3)
    with pytest.raises(ValueError, match="legal actions"):
        e.step(CALL_TRASH)  # the engine-only call is never an agent's action
    with pytest.raises(ValueError, match="legal actions"):
        e.step(None)
    with pytest.raises(ValueError, match="legal actions"):
        e.step(10.0)
    # Nothing moved: the same agent is still to act with the same observation.
    assert np.array_equal(e.observe(e.agent_selection)["observation"], before)
    e.step(np.int64(DRAW_STOCK))  # numpy integers are fine


def test_out_of_bounds_action_in_env_asserts():
    e = trash_env.env(num_players=2)
    e.reset(seed=0)
    with pytest.raises(AssertionError, match="action space"):
        e.step(13)


# ---------------------------------------------------------------------- truncation


def test_truncation_at_max_turns():
    e = trash_env.env(num_players=3, max_turns=7, round_rewards=True)
    e.reset(seed=2)
    rng = np.random.default_rng(2)
    while not any(e.truncations.values()):
        step_random(e, rng)
        if not any(e.truncations.values()):
            assert not any(e.terminations.values())
    assert e.unwrapped.game.turns == 7
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert all(r == 0 for r in e.rewards.values())
    for info in e.infos.values():
        assert info["truncated"] is True and info["placing"] == 0
        assert info["winners"].tolist() == [0, 0, 0]
    count = 0
    while e.agents:
        _, _, term, trunc, _ = e.last()
        assert trunc and not term
        e.step(None)
        count += 1
    assert count == 3


# ---------------------------------------------------------------------- calls, masks, state


def test_call_decision_is_answered_by_the_env():
    e = trash_env.raw_env(num_players=2, start_size=3, call_trash=True)
    rng = np.random.default_rng(0)
    calls = 0
    for seed in range(5):
        e.reset(seed=seed)
        while not e.game.done:
            for agent in e.possible_agents:
                decision = e.observe(agent)["observation"][decision_slice(2)]
                assert decision.sum() == 1 and decision[e.game.decision] == 1
            assert e.game.decision != Decision.CALL
            assert max(e.game.legal_actions()) < 13
            step_random(e, rng)
        kinds = [ev.kind for ev in e.game.events]
        calls += kinds.count("call")
        assert "penalty" not in kinds
    assert calls >= 5  # every round won in play was called


@pytest.mark.parametrize("n", [2, 5])
def test_masks_observations_and_state_match_the_engine(n):
    e = trash_env.raw_env(num_players=n)
    e.reset(seed=11)
    rng = np.random.default_rng(11)
    assert e.state_space.shape == (state_size(n),)
    for _ in range(150):
        if e.game.done:
            break
        game = e.game
        assert e.agent_selection == f"player_{game.current}"
        for p, agent in enumerate(e.possible_agents):
            obs = e.observe(agent)
            assert np.array_equal(obs["observation"], encode_observation(game, p))
            assert np.array_equal(obs["action_mask"], action_mask(game, p))
            assert obs["action_mask"].dtype == np.int8
            assert obs["action_mask"].any() == (p == game.current)
            assert e.observation_space(agent).contains(obs)
        state = e.state()
        assert np.array_equal(state, encode_state(game))
        assert e.state_space.contains(state)
        step_random(e, rng)


def test_observation_cache_is_per_step_and_never_mutated():
    e = trash_env.raw_env(num_players=2)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    first = e.last()[0]
    assert e.last()[0] is first  # cached within a step
    kept = first["observation"].copy()
    for _ in range(30):
        step_random(e, rng)
    assert np.array_equal(first["observation"], kept)  # later steps wrote elsewhere
    assert e.last()[0] is not first


# ---------------------------------------------------------------------- reset, options


def test_reset_seeding():
    a, b = trash_env.raw_env(num_players=3), trash_env.raw_env(num_players=3)
    a.reset(seed=9)
    b.reset(seed=9)
    assert np.array_equal(a.state(), b.state())
    a.reset()
    b.reset()  # unseeded resets follow from the seeded generator
    assert np.array_equal(a.state(), b.state())
    b.reset(seed=10)
    assert not np.array_equal(a.state(), b.state())


def test_rules_options_reach_the_game():
    e = trash_env.raw_env(num_players=4, wilds="faces", jokers=True, start_size=6)
    e.reset(seed=0)
    assert e.game.rules == trash_env.Rules(num_players=4, wilds="faces", jokers=True, start_size=6)
    assert e.game.sizes == [6] * 4


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(colour="red"), r"unknown option\(s\) colour; allowed: render_mode, round_rewards"),
        (dict(render_mode="rgb"), r"render_mode must be None or one of 'ansi', 'human'"),
        (dict(round_rewards=1), "round_rewards must be False or True"),
        (dict(num_players=7), "num_players must be an integer from 2 to 6"),
        (dict(wilds="queens"), "wilds must be one of"),
    ],
)
def test_bad_options_raise_clear_errors(options, message):
    with pytest.raises(ValueError, match=message):
        trash_env.env(**options)


# ---------------------------------------------------------------------- pickling


@pytest.mark.parametrize("maker", [trash_env.raw_env, trash_env.env])
def test_pickled_mid_game_env_continues_identically(maker):
    e = maker(num_players=3, start_size=4, round_rewards=True)
    e.reset(seed=21)
    rng = np.random.default_rng(21)
    for _ in range(40):
        step_random(e, rng)
    copy = pickle.loads(pickle.dumps(e))
    for agent in e.possible_agents:
        for key in ("observation", "action_mask"):
            assert np.array_equal(e.observe(agent)[key], copy.observe(agent)[key])
    assert np.array_equal(e.state(), copy.state())
    # Same actions from here on: the same game, including later deals and reshuffles.
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    trace_a, trace_b = [], []
    for env_, rng_, trace in ((e, rng_a, trace_a), (copy, rng_b, trace_b)):
        while env_.agents:
            obs, reward, term, trunc, info = env_.last()
            plain = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in info.items()}
            trace.append((env_.agent_selection, obs["observation"].tobytes(), reward, plain))
            if term or trunc:
                env_.step(None)
            else:
                env_.step(int(rng_.choice(np.flatnonzero(obs["action_mask"]))))
    assert trace_a == trace_b
    assert len(trace_a) > 10


# ---------------------------------------------------------------------- renders


def test_ansi_render_shows_the_table():
    e = ansi_env_after(num_players=3, seed=6, steps=25)
    text = e.render()
    game = e.game
    lines = text.splitlines()
    for p in range(3):
        header = next(i for i, line in enumerate(lines) if line[2:].startswith(f"player_{p}:"))
        won = game.rounds_won[p]
        assert (
            f"layout of {game.sizes[p]}, {won} round{'' if won == 1 else 's'} won" in lines[header]
        )
        rows = lines[header + 1 : header + 3]
        cells = [row[4 + 4 * k : 8 + 4 * k] for row in rows for k in range(5)]
        assert len(cells) == 10
        for s, c in enumerate(cells):
            state = game.state[p][s]
            assert (c == " ## ") == (state == 0)
            assert (c == " -- ") == (state == 3)
            assert c.startswith("(") == (state == 2)
        assert lines[header].startswith(">") == (p == game.current)
    top = card_short(game.discard[-1]) if game.discard else "-"
    found = re.search(r"discard top (\S+) \((\d+) cards?\), stock (\d+) cards?", text)
    assert found.groups() == (top, str(len(game.discard)), str(len(game.stock)))
    assert "last events:" in text


def test_render_shows_no_hidden_card():
    e = ansi_env_after(num_players=2, seed=8, steps=20)
    before = e.render()
    e.game.resample_hidden(np.random.default_rng(99))
    assert e.render() == before
    names = ["ann", "bob"]
    assert render_text(e.game, names, since=0).count("ann") >= 2


@pytest.mark.parametrize("n", [2, 4, 6])
def test_rgb_render_is_an_image_of_fixed_size(n):
    e = trash_env.raw_env(num_players=n, render_mode="rgb_array")
    e.reset(seed=0)
    rng = np.random.default_rng(0)
    first = e.render()
    width, height = image_size(n)
    assert first.shape == (height, width, 3) and first.dtype == np.uint8
    for _ in range(10):
        step_random(e, rng)
    later = e.render()
    assert later.shape == first.shape
    assert not np.array_equal(first, later)  # the picture follows the game


def test_human_render_prints(capsys):
    e = trash_env.raw_env(num_players=2, render_mode="human")
    e.reset(seed=0)
    step_random(e, np.random.default_rng(0))  # human mode renders after every step
    assert "player_1" in capsys.readouterr().out
    assert e.render() is None


def test_game_decided_by_the_deal_ends_at_reset():
    """With a 1-card layout the first forced draw can win the whole game before anybody
    decides: reset then reports the finished game and the agents leave by dead steps."""
    e = trash_env.raw_env(num_players=2, start_size=1)
    seed = next(s for s in range(200) if (e.reset(seed=s), e.game.done)[1])
    e.reset(seed=seed)
    returns = e.game.returns()
    assert all(e.terminations.values())
    seen = {}
    while e.agents:
        agent = e.agent_selection
        _, reward, term, _, info = e.last()
        assert term and info["placing"] in (1, 2)
        seen[agent] = reward
        e.step(None)
    assert seen == dict(zip(e.possible_agents, returns, strict=True))
    assert sorted(seen.values()) == [-1.0, 1.0]


def test_wrappers_are_pettingzoos_and_enforce_order():
    from pettingzoo.utils import wrappers

    e = trash_env.env()
    assert isinstance(e, wrappers.OrderEnforcingWrapper)
    assert isinstance(e.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(e.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(e.unwrapped, trash_env.raw_env)
    for name in ("agents", "rewards", "agent_selection", "num_agents", "terminations", "infos"):
        with pytest.raises(AttributeError, match="cannot be accessed before reset"):
            getattr(e, name)
    e.reset(seed=0)
    raw = e.unwrapped
    # The wrappers read the bare env's live attributes (no stale copies).
    assert e.agent_selection == raw.agent_selection
    step_random(e, np.random.default_rng(0))
    assert e.agent_selection == raw.agent_selection and e.agents is raw.agents
    assert e.env.env.terminations is raw.terminations
    assert str(e) == "trash_v0"


def test_call_trash_plays_like_the_standard_game_for_agents():
    """The env always calls, so with the same seed and actions the game is the same."""
    plain = trash_env.raw_env(num_players=2, start_size=3)
    calls = trash_env.raw_env(num_players=2, start_size=3, call_trash=True)
    rng = np.random.default_rng(2)
    for seed in range(3):
        plain.reset(seed=seed)
        calls.reset(seed=seed)
        while plain.agents:
            a, b = plain.last(), calls.last()
            assert np.array_equal(a[0]["observation"], b[0]["observation"])
            assert a[1:4] == b[1:4] and plain.agent_selection == calls.agent_selection
            assert a[4].keys() == b[4].keys()
            assert all(np.array_equal(a[4][k], b[4][k]) for k in a[4])
            if a[2] or a[3]:
                action = None
            else:
                action = int(rng.choice(np.flatnonzero(a[0]["action_mask"])))
            plain.step(action)
            calls.step(action)
        assert not calls.agents
        assert any(e.kind == "call" for e in calls.game.events)


# ---------------------------------------------------------------------- batchable infos


@pytest.mark.parametrize(
    "options",
    [
        dict(num_players=3, start_size=3),
        dict(num_players=2, max_turns=9),
        dict(num_players=4, start_size=2, episode="round", round_rewards=True),
    ],
    ids=["3p", "truncated", "4p-round"],
)
def test_infos_have_the_same_keys_types_and_shapes_on_every_step(options):
    """Batching buffers (Tianshou's) stack every step's info per key: the keys, types, shapes
    and dtypes may never change, from reset to the last dead step."""
    e = trash_env.env(**options)
    n = e.unwrapped.rules.num_players
    rng = np.random.default_rng(1)
    signatures, infos = set(), []
    for seed in range(3):
        e.reset(seed=seed)
        for _agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            signatures.add(
                tuple(
                    sorted(
                        (
                            k,
                            type(v).__name__,
                            getattr(v, "shape", None),
                            str(getattr(v, "dtype", "")),
                        )
                        for k, v in info.items()
                    )
                )
            )
            infos.append(info)
            if term or trunc:
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert signatures == {
        (
            ("placing", "int", None, ""),
            ("rounds_won", "int", None, ""),
            ("truncated", "bool", None, ""),
            ("winners", "ndarray", (n,), "int8"),
        )
    }
    stacked = {key: np.stack([i[key] for i in infos]) for key in infos[0]}
    assert stacked["winners"].shape == (len(infos), n)
    assert stacked["placing"].dtype.kind == "i" and stacked["truncated"].dtype == bool


def test_infos_handed_out_are_never_changed_afterwards():
    """A buffer may keep the info dicts: the env replaces them, never writes into them."""
    e = trash_env.raw_env(num_players=2, start_size=3)
    e.reset(seed=4)
    kept = []
    rng = np.random.default_rng(4)
    while not e.game.done:
        info = e.infos[e.agent_selection]
        kept.append((info, {k: np.copy(v) for k, v in info.items()}))
        step_random(e, rng)
    for info, copy in kept:
        assert all(np.array_equal(info[k], copy[k]) for k in copy)
        assert not info["winners"].flags.writeable
