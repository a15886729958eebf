"""The single-agent Gymnasium view (trash_env.solo): API checks, vector envs, rewards, seats,
opponent pools, the call rule and option errors."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

import trash_env
from agents.bots.base import Agent, RandomAgent
from trash_env.engine import DECLINE, DRAW_STOCK, TAKE_DISCARD, Decision
from trash_env.observation import encode_observation, observation_size
from trash_env.solo import TrashSoloEnv


def play_random(env: TrashSoloEnv, seed: int, options: dict | None = None) -> tuple[list, dict]:
    """One episode with a uniformly random learner; the rewards and the last info."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=options)
    rewards = []
    while True:
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert env.observation_space.contains(obs)
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"episode": "round"},
        {"num_players": 3, "call_trash": True},
        {"num_players": 4},
        {"num_players": 3, "observation": "pairs"},
    ],
)
def test_gymnasium_and_sb3_checkers_pass(options):
    gym_check_env(TrashSoloEnv(**options), skip_render_check=True)
    sb3_check_env(TrashSoloEnv(**options))


def test_registered_with_gymnasium():
    env = gymnasium.make(trash_env.SOLO_ENV_ID, num_players=3, opponents=["random"])
    obs, _ = env.reset(seed=0)
    assert obs.shape == (observation_size(3),)
    assert env.unwrapped.action_masks().shape == (13,)
    gym_check_env(env.unwrapped, skip_render_check=True)


def _masked_steps(venv, steps: int, seed: int) -> int:
    rng = np.random.default_rng(seed)
    venv.seed(seed)
    venv.reset()
    episodes = 0
    for _ in range(steps):
        masks = np.array(venv.env_method("action_masks"))
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        _, rewards, dones, infos = venv.step(np.array(actions))
        for reward, done in zip(rewards, dones, strict=True):
            if done:
                episodes += 1
                assert reward in (-1.0, 1.0)
    return episodes


def test_dummy_and_subproc_vec_envs_play_the_same_episodes():
    def makers():
        return [lambda: TrashSoloEnv(episode="round", opponents=["greedy"]) for _ in range(2)]

    dummy = DummyVecEnv(makers())
    episodes_dummy = _masked_steps(dummy, 300, seed=3)
    subproc = SubprocVecEnv(makers(), start_method="spawn")
    try:
        episodes_subproc = _masked_steps(subproc, 300, seed=3)
        subproc.env_method("set_opponents", ["random"])
        assert subproc.get_attr("opponent_specs") == [["random"], ["random"]]
    finally:
        subproc.close()
    assert episodes_dummy == episodes_subproc > 10


def test_final_reward_is_the_learners_share_whoever_ends_the_game():
    env = TrashSoloEnv(episode="round")
    ended_by = {"learner": 0, "opponent": 0}
    for seed in range(300):
        rewards, info = play_random(env, seed)
        game = env.game
        assert rewards[:-1] == [0.0] * (len(rewards) - 1)
        assert rewards[-1] == game.returns()[env.seat] == (1.0 if info["won"] else -1.0)
        winner = next(e.player for e in reversed(game.events) if e.kind == "round_won")
        ended_by["learner" if winner == env.seat else "opponent"] += 1
    assert min(ended_by.values()) > 50  # both cases happen, and both pay


def test_three_players_pay_zero_sum_shares():
    env = TrashSoloEnv(num_players=3, episode="round", opponents=["greedy", "random"])
    for seed in range(40):
        rewards, info = play_random(env, seed)
        assert sum(rewards) == pytest.approx(1.0 if info["won"] else -0.5)


def test_whole_game_with_round_rewards_pays_each_deal_and_the_game():
    env = TrashSoloEnv(start_size=3, round_rewards=True, opponents=["greedy"])
    for seed in range(20):
        rewards, info = play_random(env, seed)
        game = env.game
        deals = sum(game.shares_to_returns(r)[env.seat] for r in game.round_results)
        assert sum(rewards) == pytest.approx(deals + game.returns()[env.seat])
        assert info["placing"] == game.placings[env.seat]


def test_seat_is_drawn_per_episode_or_fixed():
    env = TrashSoloEnv(num_players=3)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(40)}
    assert seats == {0, 1, 2}
    fixed = TrashSoloEnv(num_players=3, seat=2)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(10)} == {2}
    assert env.reset(seed=0, options={"seat": 1})[1]["seat"] == 1
    # The learner observes from its own seat.
    obs, info = env.reset(seed=5)
    assert np.array_equal(obs, encode_observation(env.game, info["seat"]))
    assert env.game.current == info["seat"]


def test_same_seed_same_episode_and_options_seat_duplicates_the_deal():
    env = TrashSoloEnv(episode="round", opponents=["greedy", "random"])
    rewards, _ = play_random(env, 11)
    events = env.game.events[:]
    assert play_random(env, 11)[0] == rewards and env.game.events == events
    # The same reset seed with the seat given deals the same cards to the other seat.
    env.reset(seed=4, options={"seat": 0})
    deal_a = env.deal_seed
    env.reset(seed=4, options={"seat": 1})
    assert env.deal_seed == deal_a
    first = [e for e in env.game.events if e.kind == "deal"]
    fresh = trash_env.Game(env.rules, seed=deal_a)
    assert [e for e in fresh.events if e.kind == "deal"] == first


class Recorder(Agent):
    """Random, but remembers that it played (and checks it was asked at its own turn)."""

    name = "recorder"

    def __init__(self, seed=None):
        super().__init__(seed)
        self.moves = 0

    def act(self, observation, action_mask, view):
        assert view.current == view.seat
        assert np.array_equal(observation, encode_observation(view._game, view.seat))
        self.moves += 1
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


def test_opponent_pool_mixes_specs_and_agents_per_episode():
    recorder = Recorder()
    env = TrashSoloEnv(episode="round", opponents=["greedy", recorder])
    kinds = set()
    for seed in range(30):
        env.reset(seed=seed)
        kinds.add(type(env.table[1 - env.seat]).__name__)
    assert kinds == {"GreedyAgent", "Recorder"}
    for seed in range(10):
        play_random(env, seed)
    assert recorder.moves > 0
    # Two seats drawing one spec get two agents (agents may keep state within a game).
    three = TrashSoloEnv(num_players=3, seat=0, opponents=["greedy"])
    three.reset(seed=0)
    assert three.table[1] is not three.table[2]
    env.set_opponents("random")
    env.reset(seed=0)
    assert isinstance(env.table[1 - env.seat], RandomAgent)


def test_call_decisions_are_answered_for_every_seat():
    env = TrashSoloEnv(call_trash=True, start_size=2, episode="round")
    calls = 0
    for seed in range(60):
        play_random(env, seed)
        calls += sum(e.kind == "call" for e in env.game.events)
        assert not any(e.kind == "penalty" for e in env.game.events)
    assert calls >= 60  # every finished deal was called


def test_illegal_action_loses_or_raises():
    env = TrashSoloEnv(episode="round")
    env.reset(seed=0)
    while env.game.decision == Decision.DRAW:  # reach a decision where DECLINE is illegal
        env.step(DRAW_STOCK if env.action_masks()[DRAW_STOCK] else TAKE_DISCARD)
        if env.game.done:
            env.reset()
    obs, reward, terminated, truncated, info = env.step(
        DECLINE if not env.action_masks()[DECLINE] else 99
    )
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(DRAW_STOCK)
    strict = TrashSoloEnv(illegal="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="legal actions"):
        strict.step(DECLINE)


def test_truncation_pays_nothing():
    env = TrashSoloEnv(max_turns=3)
    rewards, info = play_random(env, 0)
    assert info["truncated"] and rewards[-1] == 0.0


def test_observation_hides_the_hidden_cards():
    env = TrashSoloEnv(episode="round")
    obs, info = env.reset(seed=9)
    env.game.resample_hidden(np.random.default_rng(1))
    assert np.array_equal(obs, encode_observation(env.game, info["seat"]))


def test_clear_errors_for_bad_options():
    with pytest.raises(ValueError, match="unknown rules option"):
        TrashSoloEnv(wild="kings")
    with pytest.raises(ValueError, match="seat must be"):
        TrashSoloEnv(seat=2)
    with pytest.raises(ValueError, match="at least one opponent"):
        TrashSoloEnv(opponents=[])
    with pytest.raises(ValueError, match="unknown agent"):
        TrashSoloEnv(opponents=["nobody"])
    with pytest.raises(ValueError, match="illegal must be"):
        TrashSoloEnv(illegal="ignore")
    with pytest.raises(ValueError, match="reset options"):
        TrashSoloEnv().reset(options={"seats": 1})
    with pytest.raises(ValueError, match="seat must be"):
        TrashSoloEnv().reset(options={"seat": 2})
    with pytest.raises(RuntimeError, match="reset"):
        TrashSoloEnv().step(DRAW_STOCK)


def test_render_ansi():
    env = TrashSoloEnv(render_mode="ansi", opponents=["greedy"])
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    text = env.render()
    assert isinstance(text, str) and "learner" in text


def test_opponents_get_an_observation_only_if_they_use_it():
    seen = {True: [], False: []}

    class Recorder(Agent):
        def act(self, observation, action_mask, view):
            seen[self.uses_observation].append((observation, view.seat))
            return int(np.flatnonzero(action_mask)[0])

    reader, skipper = Recorder(0), Recorder(0)
    skipper.uses_observation = False
    env = TrashSoloEnv(opponents=[reader, skipper], num_players=3, seat=0, start_size=3)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    assert seen[True] and seen[False]
    assert all(obs is None for obs, _ in seen[False])
    assert all(obs.shape == (observation_size(3),) for obs, _ in seen[True])


# ---------------------------------------------------------------------- batchable infos, renders


def info_signature(info: dict) -> dict:
    """Key -> (type, shape, dtype): what a batching buffer needs to be equal on every step."""
    return {
        key: (type(value), getattr(value, "shape", None), getattr(value, "dtype", None))
        for key, value in info.items()
    }


@pytest.mark.parametrize(
    "options",
    [dict(num_players=3, start_size=2), dict(max_turns=5), dict(start_size=2, illegal="lose")],
    ids=["3p", "truncated", "illegal"],
)
def test_infos_have_the_same_keys_types_and_shapes_on_every_step(options):
    env = TrashSoloEnv(**options)
    rng = np.random.default_rng(0)
    infos = []
    for episode in range(3):
        _, info = env.reset(seed=episode)
        infos.append(info)
        done = False
        while not done:
            mask = env.action_masks()
            if "illegal" in options and rng.random() < 0.05 and not mask.all():
                action = int(np.flatnonzero(~mask)[0])  # forfeits
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            _, _, terminated, truncated, info = env.step(action)
            infos.append(info)
            done = terminated or truncated
        n = env.rules.num_players
        assert info["winners"].shape == (n,) and info["winners"].dtype == np.int8
        if info["truncated"] or info["illegal_action"]:
            assert info["placing"] == 0 and not info["winners"].any() and not info["won"]
        else:
            assert info["placing"] == env.game.placings[env.seat] >= 1
            assert info["winners"].tolist() == [int(p in env.game.winners) for p in range(n)]
            assert info["won"] == (env.seat in env.game.winners)
    first = info_signature(infos[0])
    assert all(info_signature(i) == first for i in infos)
    assert set(first) == {
        "seat",
        "action_mask",
        "illegal_action",
        "winners",
        "won",
        "placing",
        "rounds_won",
        "truncated",
    }
    # What a buffer does with them: one array per key.
    stacked = {key: np.stack([i[key] for i in infos]) for key in first}
    assert stacked["winners"].shape == (len(infos), env.rules.num_players)


def test_make_vec_env_with_its_default_rgb_array_render_mode():
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(trash_env.SOLO_ENV_ID, n_envs=2, seed=0, env_kwargs={"num_players": 3})
    venv.reset()
    frames = venv.get_images()
    assert len(frames) == 2
    for frame in frames:
        assert frame.dtype == np.uint8 and frame.shape[2] == 3 and frame.shape[0] > 100
    venv.close()
    env = TrashSoloEnv(render_mode="human", start_size=2)
    env.reset(seed=1)
    assert env.render() is None


@pytest.mark.parametrize(
    "action",
    [
        10.7,
        10.0,
        "10",
        True,
        False,
        np.True_,
        None,
        np.array(10),
        np.array([10]),
        [10],
        13,
        -1,
        99,
        np.int64(13),
    ],
)
def test_step_refuses_anything_but_an_integer_of_the_action_space(action):
    for illegal in ("lose", "raise"):
        env = TrashSoloEnv(illegal=illegal)
        env.reset(seed=0)
        events = len(env.game.events)
        with pytest.raises(ValueError, match=r"action must be an integer from 0 to 12"):
            env.step(action)
        assert len(env.game.events) == events  # refused: nothing happened


def test_step_takes_numpy_integer_scalars():
    env = TrashSoloEnv()
    env.reset(seed=0)
    action = np.flatnonzero(env.action_masks())[0]
    for kind in (np.int64, np.int32, np.uint8, np.int16):
        env.reset(seed=0)
        _, _, _, _, info = env.step(kind(action))
        assert not info["illegal_action"]


def test_human_render_mode_prints_the_table_at_reset_and_every_step(capsys):
    env = TrashSoloEnv(render_mode="human", start_size=2)
    env.reset(seed=1)
    assert "> learner" in capsys.readouterr().out
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert "learner:" in capsys.readouterr().out
    assert env.render() is None
