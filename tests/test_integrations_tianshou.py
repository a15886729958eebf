"""Tianshou's views of the env (trash_env.integrations.tianshou): the learner-seat env's dict
observation ``{"obs", "mask"}`` and the PettingZooEnv go through Tianshou's collector into its
replay buffer (infos of every step stack), and the illegal-move counters count. Skips without
tianshou."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: the second tier
pytest.importorskip("tianshou", reason="tianshou is not installed (the 'tianshou' extra)")

from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402

from trash_env.integrations.tianshou import make_env, make_solo_env  # noqa: E402


def test_collector_buffers_whole_games_with_masks():
    probe = make_env(episode="round")
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[
            MARLRandomDiscreteMaskedOffPolicyAlgorithm(probe.action_space) for _ in range(2)
        ],
        env=probe,
    )
    envs = DummyVectorEnv([lambda: make_env(episode="round") for _ in range(2)])
    envs.seed(0)
    buffer = VectorReplayBuffer(5000, 2)
    collector = Collector(algorithm, envs, buffer)
    collector.reset()
    stats = collector.collect(n_episode=4)
    assert stats.n_collected_episodes == 4
    returns = np.asarray(stats.returns)
    assert returns.shape[1] == 2 and np.allclose(returns.sum(axis=1), 0)  # zero-sum games
    data = buffer.sample(0)[0]
    acts = data.act
    masks = np.asarray(data.obs.mask)
    assert masks[np.arange(len(acts)), acts].all()  # every buffered action was legal
    assert sum(envs.get_env_attr("illegal_moves")) == 0


def test_illegal_moves_counted():
    env = make_env()
    obs, _ = env.reset(seed=0)
    env.step(np.int64(np.flatnonzero(~np.asarray(obs["mask"]))[0]))
    assert env.illegal_moves == 1


def test_solo_env_dict_observation_through_the_collector():
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm as Rand

    probe = make_solo_env(opponents=["greedy"], observation="pairs")
    obs, info = probe.reset(seed=0)
    assert probe.observation_space.contains(obs)
    assert obs["obs"].shape == (261,) and (obs["mask"] == info["action_mask"]).all()
    # Tianshou's masked random policy reads obs.mask: a Batch of the dict observation.
    envs = DummyVectorEnv(
        [lambda: make_solo_env(opponents=["greedy"], observation="pairs") for _ in range(2)]
    )
    envs.seed([0, 1])
    buffer = VectorReplayBuffer(2000, 2)
    collector = Collector(Rand(probe.action_space), envs, buffer)
    collector.reset()
    stats = collector.collect(n_episode=2)
    assert stats.n_collected_episodes == 2
    assert set(np.asarray(stats.returns).tolist()) <= {-1.0, 1.0}  # whole 2-player games
    data = buffer.sample(0)[0]
    assert np.asarray(data.obs.mask)[np.arange(len(data.act)), data.act].all()
    assert sum(envs.get_env_attr("illegal_moves")) == 0


def test_solo_env_counts_illegal_moves():
    env = make_solo_env()
    obs, _ = env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(np.int64(np.flatnonzero(~obs["mask"])[0]))
    assert env.illegal_moves == 1 and terminated and reward == -1.0
