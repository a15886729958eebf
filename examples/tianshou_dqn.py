"""Tianshou DQN on Trash: a masked DQN learner (player_0) against a masked random player.

    pip install -e ".[tianshou]"
    python examples/tianshou_dqn.py --steps 20000 --eval-games 100

The env is Tianshou's own ``PettingZooEnv`` (``trash_env.integrations.tianshou``); the learner
and the opponent sit in Tianshou's ``MultiAgentOffPolicyAlgorithm``, which hands each agent's
transitions to its algorithm. DQN's Q-values of masked actions are pushed below every legal
one, and its epsilon-greedy exploration draws only legal actions, so no illegal move is made:
the script counts them (training and evaluation) and prints the count with the learner's win
rate against random before and after training.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations.tianshou import make_env  # noqa: E402, I001
import numpy as np  # noqa: E402
import torch  # noqa: E402
from tianshou.algorithm import DQN  # noqa: E402
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm  # noqa: E402
from tianshou.data import Collector, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402
from tianshou.utils.torch_utils import policy_within_training_step  # noqa: E402


def win_rate(algorithm: MultiAgentOffPolicyAlgorithm, envs: DummyVectorEnv, games: int) -> float:
    """player_0's share of wins (its final reward > 0) over ``games`` greedy games."""
    collector = Collector(algorithm, envs)
    collector.reset()
    stats = collector.collect(n_episode=games)
    returns = np.asarray(stats.returns)
    return float(np.mean(returns[:, 0] > 0))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20000, help="env steps of training (budget)")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--envs", type=int, default=4, help="envs collected in parallel")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # Tianshou's exploration and random policy draw from numpy's and torch's global generators
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # batches of a few observations: threads only contend
    # its stats warn once per collect that multi-agent returns are vectors (we read them whole)
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)

    probe = make_env()
    obs_size = probe.observation_space["observation"].shape[0]
    n_actions = int(probe.action_space.n)
    net = Net(state_shape=obs_size, action_shape=n_actions, hidden_sizes=[128, 128])
    policy = DiscreteQLearningPolicy(
        model=net, action_space=probe.action_space, eps_training=0.2, eps_inference=0.0
    )
    learner = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        n_step_return_horizon=4,
        target_update_freq=200,
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(probe.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=probe)

    train_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    test_envs = DummyVectorEnv([make_env for _ in range(args.envs)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 10_000)

    before = win_rate(algorithm, test_envs, args.eval_games)
    buffer = VectorReplayBuffer(max(args.steps, 1000), args.envs)
    collector = Collector(algorithm, train_envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=256, random=False)
    done = 256
    while done < args.steps:
        # a training step: exploration uses eps_training, and update() is allowed
        with policy_within_training_step(algorithm.policy):
            collector.collect(n_step=64)
            done += 64
            for _ in range(8):
                algorithm.update(buffer=buffer, sample_size=64)
    after = win_rate(algorithm, test_envs, args.eval_games)
    illegal = sum(sum(group.get_env_attr("illegal_moves")) for group in (train_envs, test_envs))
    summary = {
        "train_steps": done,
        "eval_games": args.eval_games,
        "win_rate_before": before,
        "win_rate_after": after,
        "illegal_moves": illegal,
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
