"""The batched single-agent envs (trash_env.vector.env) against TrashSoloEnv's semantics.

The trajectory test replays every slot of a ``TrashVecEnv`` on a ``TrashSoloEnv`` set to the
same episode (the slot's game seed, learner seat and opponents), with the same learner actions,
and requires the same observations, masks, rewards, ends and infos: the batched greedy, counting
and policy opponents must play exactly as the agents in ``agents/``.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.bots.base import make_agent
from trash_env.engine import Game
from trash_env.observation import observation_size
from trash_env.solo import TrashSoloEnv
from trash_env.vector import _kernels as K
from trash_env.vector.env import SoloBatch, TrashVecEnv, make_vec_env, supports_opponents

KIND_SPEC = {K.BOT_GREEDY: "greedy", K.BOT_COUNTING: "counting"}


def solo_episode(
    vec: TrashVecEnv, g: int, specs: list[str], round_rewards: bool, options: dict
) -> TrashSoloEnv:
    """A TrashSoloEnv at the start of slot g's current episode."""
    core = vec.core
    solo = TrashSoloEnv(opponents=["greedy"], round_rewards=round_rewards, **options)
    n = core.rules.num_players
    seat = int(core.seats[g])
    table = []
    for p in range(n):
        if p == seat:
            table.append(None)
        elif core.kinds[g, p] == K.BOT_POLICY:
            table.append(make_agent(specs[int(core.policy_of[g, p])], seed=0))
        elif core.kinds[g, p] == K.BOT_COUNTING:
            weight = float(core.weights[g, p])
            table.append(make_agent(f"counting:discard_weight={weight}", seed=0))
        else:
            table.append(make_agent(KIND_SPEC[int(core.kinds[g, p])], seed=0))
    solo.seat, solo.table = seat, table
    solo.game = Game(core.rules, seed=int(core.batch.seeds[g]))
    solo._deals_paid, solo._last_events, solo._illegal = 0, 0, False
    solo._pending = solo._advance()
    assert not solo.game.done
    return solo


@pytest.mark.parametrize(
    ("specs", "round_rewards", "options"),
    [
        (["greedy", "counting"], True, {}),
        (["greedy", "counting:discard_weight=0.2"], False, {"num_players": 3, "call_trash": True}),
        (
            ["counting"],
            True,
            {
                "num_players": 4,
                "wilds": "faces",
                "jokers": True,
                "losers_reveal": True,
                "start_size": 5,
            },
        ),
        (["greedy", "pretrained"], True, {}),
        (
            ["greedy"],
            True,
            {"losers_reveal": True, "free_draws": 3, "episode": "round", "max_turns": 40},
        ),
    ],
)
def test_trajectories_match_trash_solo_env(specs, round_rewards, options) -> None:
    envs = 12
    vec = TrashVecEnv(envs, specs, round_rewards=round_rewards, seed=11, **options)
    observations = vec.reset()
    solos = [solo_episode(vec, g, specs, round_rewards, options) for g in range(envs)]
    choose = np.random.default_rng(1)
    finished = 0
    for _ in range(400):
        masks = vec.action_masks()
        for g, solo in enumerate(solos):
            assert observations[g].tobytes() == solo._observe().tobytes()
            assert masks[g].tolist() == solo.action_masks().tolist()
        actions = np.array([choose.choice(np.flatnonzero(m)) for m in masks])
        vec.step_async(actions)
        observations, rewards, dones, infos = vec.step_wait()
        for g, solo in enumerate(solos):
            obs, reward, terminated, truncated, info = solo.step(int(actions[g]))
            assert rewards[g] == pytest.approx(reward, abs=1e-6)
            assert dones[g] == (terminated or truncated)
            if dones[g]:
                finished += 1
                final = infos[g]
                assert final["terminal_observation"].tobytes() == obs.tobytes()
                assert final["TimeLimit.truncated"] == truncated
                for key, value in info.items():
                    assert np.array_equal(final[key], value), key
                assert final["episode"]["l"] >= 1
                solos[g] = solo_episode(vec, g, specs, round_rewards, options)
            else:
                assert infos[g] == {}
    assert finished >= envs


def test_episode_stats_sum_the_rewards() -> None:
    vec = TrashVecEnv(4, ["random"], round_rewards=True, seed=3, start_size=3)
    vec.reset()
    totals = np.zeros(4)
    lengths = np.zeros(4, int)
    seen = 0
    choose = np.random.default_rng(0)
    while seen < 20:
        masks = vec.action_masks()
        vec.step_async(np.array([choose.choice(np.flatnonzero(m)) for m in masks]))
        _, rewards, dones, infos = vec.step_wait()
        totals += rewards
        lengths += 1
        for g in np.flatnonzero(dones):
            assert infos[g]["episode"]["r"] == pytest.approx(totals[g], abs=1e-5)
            assert infos[g]["episode"]["l"] == lengths[g]
            totals[g], lengths[g] = 0.0, 0
            seen += 1


def test_random_opponents_play_legal_moves_and_spread() -> None:
    core = SoloBatch(64, ["random"], seed=5, num_players=3)
    core.reset()
    for _ in range(300):
        masks = core.action_masks()
        assert masks.any(axis=1).all()
        actions = masks.argmax(axis=1)
        _, _, terminated, truncated, illegal, _ = core.step(actions)
        assert not illegal.any()
    assert {int(s) for s in core.seats} == {0, 1, 2}


def test_illegal_action_forfeits() -> None:
    vec = TrashVecEnv(3, ["greedy"], seed=0)
    vec.reset()
    masks = vec.action_masks()
    actions = masks.argmax(axis=1)
    bad = np.flatnonzero(~masks[1])[0]
    actions[1] = bad
    vec.step_async(actions)
    _, rewards, dones, infos = vec.step_wait()
    assert dones[1] and rewards[1] == -1.0 and infos[1]["illegal_action"] is True
    assert "episode" in infos[1] and infos[1]["TimeLimit.truncated"] is False


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="search"):
        TrashVecEnv(2, ["search:rollouts=2"])
    with pytest.raises(ValueError, match="unknown agent"):
        TrashVecEnv(2, ["nobody"])
    with pytest.raises(ValueError, match="seat"):
        TrashVecEnv(2, ["random"], seat=2)
    with pytest.raises(ValueError, match="num_envs"):
        TrashVecEnv(0)
    with pytest.raises(ValueError, match="wilds"):
        TrashVecEnv(2, wilds="queens")
    vec = TrashVecEnv(2, ["greedy"])
    vec.reset()
    for bad in ([0, 13], [-1, 0], [0.0, 1.0], [0]):
        with pytest.raises(ValueError, match="actions"):
            vec.step_async(np.array(bad))
            vec.step_wait()
    assert supports_opponents(["random", "greedy", "counting", "pretrained"])
    assert not supports_opponents(["greedy", "search:rollouts=2"])


def test_maskable_ppo_learns_on_it_and_logs_episodes() -> None:
    sb3_contrib = pytest.importorskip(
        "sb3_contrib", reason="sb3-contrib is not installed (the 'train' extra)"
    )
    vec = make_vec_env(8, ["random", "greedy"], {"start_size": 3}, seed=0, round_rewards=True)
    assert vec.observation_space.shape == (observation_size(2),)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", vec, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=1024)
    assert model.num_timesteps >= 1024
    assert len(model.ep_info_buffer) > 0
    vec.env_method("set_opponents", ["greedy"])
    # A trained policy object as an opponent: one batched torch forward pass.
    vec.set_opponents([model.policy])
    vec.reset()
    for _ in range(50):
        masks = vec.action_masks()
        vec.step_async(masks.argmax(axis=1))
        vec.step_wait()


def test_gymnasium_vector_env_steps_as_the_sb3_one() -> None:
    from trash_env.vector import TrashVectorEnv

    options = {"num_players": 3, "start_size": 4}
    gym_env = TrashVectorEnv(6, ["greedy", "counting"], round_rewards=True, seed=2, **options)
    sb3_env = TrashVecEnv(6, ["greedy", "counting"], round_rewards=True, seed=2, **options)
    observations, infos = gym_env.reset()
    assert np.array_equal(observations, sb3_env.reset())
    assert gym_env.single_observation_space.shape == (observation_size(3),)
    assert gym_env.action_space.shape == (6,)
    choose = np.random.default_rng(0)
    finals = 0
    for _ in range(300):
        masks = infos["action_mask"]
        assert np.array_equal(masks, sb3_env.action_masks())
        actions = np.array([choose.choice(np.flatnonzero(m)) for m in masks])
        observations, rewards, terminated, truncated, infos = gym_env.step(actions)
        sb3_env.step_async(actions)
        expected, sb3_rewards, dones, sb3_infos = sb3_env.step_wait()
        assert np.array_equal(observations, expected)
        assert np.allclose(rewards, sb3_rewards)
        assert np.array_equal(terminated | truncated, dones)
        for g in np.flatnonzero(dones):
            finals += 1
            assert infos["_final_obs"][g]
            assert np.array_equal(infos["final_obs"][g], sb3_infos[g]["terminal_observation"])
            assert infos["final_info"][g]["winners"].tolist() == sb3_infos[g]["winners"].tolist()
    assert finals > 0


def test_sampling_policy_opponents_stay_legal() -> None:
    vec = TrashVecEnv(16, ["pretrained:deterministic=false"], seed=4, round_rewards=True)
    vec.reset()
    finished = 0
    for _ in range(150):
        masks = vec.action_masks()
        vec.step_async(masks.argmax(axis=1))
        _, _, dones, _ = vec.step_wait()  # an illegal opponent move would raise
        finished += int(dones.sum())
    assert finished > 0


def test_reset_with_a_seed_replays_the_same_episodes() -> None:
    vec = TrashVecEnv(5, ["greedy", "random"], seed=0)
    vec.seed(7)  # stable-baselines3's way: the next reset() starts from this seed
    first = vec.reset()
    seeds, seats = vec.core.batch.seeds.copy(), vec.core.seats.copy()
    for _ in range(20):
        vec.step_async(vec.action_masks().argmax(axis=1))
        vec.step_wait()
    vec.seed(7)
    again = vec.reset()
    assert np.array_equal(first, again)
    assert np.array_equal(seeds, vec.core.batch.seeds)
    assert np.array_equal(seats, vec.core.seats)
    other = TrashVecEnv(5, ["greedy", "random"], seed=123)
    other.seed(7)
    assert np.array_equal(other.reset(), first)


def test_a_policy_for_another_table_size_is_refused() -> None:
    with pytest.raises(ValueError, match="trained for 2 players, but this game has 3"):
        TrashVecEnv(2, ["pretrained_2p"], num_players=3)


def test_shaping_matches_the_solo_wrapper_and_keeps_the_true_return() -> None:
    """The batched progress shaping (SoloBatch) pays what agents.training.shaping.ProgressShaping
    pays
    on TrashSoloEnv replaying the same episodes; the episode figures keep the true return."""
    from agents.training.shaping import ProgressShaping

    specs, options, envs = ["greedy", "counting"], {"start_size": 4, "num_players": 3}, 8
    vec = TrashVecEnv(envs, specs, round_rewards=True, seed=4, shaping=0.75, **options)
    assert TrashVecEnv(2, specs).core.shaping == 0.0  # off by default
    observations = vec.reset()

    def shaped(g: int) -> ProgressShaping:
        solo = solo_episode(vec, g, specs, True, options)
        wrapper = ProgressShaping(solo, 0.75)
        wrapper.start()  # follow the episode under way, as its reset() would
        return wrapper

    solos = [shaped(g) for g in range(envs)]
    choose = np.random.default_rng(2)
    returns, shaping_sums = np.zeros(envs), np.zeros(envs)
    finished = 0
    deal_ends = 0
    for _ in range(300):
        masks = vec.action_masks()
        actions = np.array([choose.choice(np.flatnonzero(m)) for m in masks])
        deals = [w.unwrapped.game.deal_number for w in solos]
        vec.step_async(actions)
        observations, rewards, dones, infos = vec.step_wait()
        for g, wrapper in enumerate(solos):
            _, reward, terminated, truncated, info = wrapper.step(int(actions[g]))
            assert rewards[g] == pytest.approx(reward, abs=1e-6)
            returns[g] += reward - info["shaping"]
            shaping_sums[g] += info["shaping"]
            deal_ends += wrapper.unwrapped.game.deal_number != deals[g]
            if dones[g]:
                finished += 1
                assert infos[g]["episode"]["r"] == pytest.approx(returns[g], abs=1e-5)
                assert infos[g]["episode"]["shaping"] == pytest.approx(shaping_sums[g], abs=1e-5)
                returns[g] = shaping_sums[g] = 0.0
                solos[g] = shaped(g)
    assert finished >= envs and deal_ends > 3 * envs
    vec.env_method("set_shaping", 0.0)
    assert vec.core.shaping == 0.0
    with pytest.raises(ValueError, match="shaping must be a number from 0 to 10"):
        vec.set_shaping(-1)


def test_turning_the_shaping_on_later_pays_what_a_follower_from_the_start_pays() -> None:
    """At coefficient 0 the batch follows no progress; set_shaping(c) picks every slot up where
    it stands (a slot just reset, one mid-deal): from there on each pays what a batch shaped
    from the start pays."""
    from trash_env.progress import progress_potential

    options = {"start_size": 3, "round_rewards": True}
    always = TrashVecEnv(12, ["greedy"], seed=9, shaping=1.25, **options)
    later = TrashVecEnv(12, ["greedy"], seed=9, **options)
    always.reset()
    later.reset()
    choose = np.random.default_rng(3)
    switched = False
    compared = 0
    for _ in range(400):
        core = later.core
        fresh = core.episode_length == 0
        # phi now; a fresh slot whose opponents moved before its learner's first decision
        # has phi != 0, and a follower from the start holds 0 for it there
        games = core.batch.games
        phi = progress_potential(games["sizes"][:, :2], games["face_down"][:, :2], core.seats)
        if not switched and (fresh & (phi != 0)).any() and not fresh.all():
            later.set_shaping(1.25)
            switched = True
        masks = always.action_masks()
        actions = np.array([choose.choice(np.flatnonzero(m)) for m in masks])
        _, r_always, d_always, _ = always.step(actions)
        _, r_later, d_later, _ = later.step(actions)
        assert np.array_equal(d_always, d_later)
        if switched:
            assert np.allclose(r_later, r_always, atol=1e-12)
            compared += 1
    assert switched and compared >= 100
