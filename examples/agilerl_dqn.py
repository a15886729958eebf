"""AgileRL DQN on Trash: self-play with one masked DQN, transitions from the AEC env.

    pip install "agilerl==2.58.0" "peft==0.21.0" && pip install "pettingzoo==1.27.0"
    python examples/agilerl_dqn.py --steps 20000 --eval-games 100

AgileRL's DQN takes the action mask in ``get_action`` but leaves the environment loop to the
user, and in a turn-based game the user must credit each agent's reward to its own previous
decision. ``trash_env.integrations.play_game`` does that (one transition per decision, the
reward being everything the agent earned up to its next decision, the final reward on every
agent's last decision); the transitions go into AgileRL's ``ReplayBuffer`` as its own
``Transition`` objects and ``DQN.learn`` samples them. The script prints the learner's win rate
against a random player (both seats) before and after training, and the illegal moves (0).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from trash_env.integrations import play_game  # noqa: E402, I001

try:
    import agilerl  # noqa: F401
except ModuleNotFoundError as error:  # no extra: AgileRL caps pettingzoo below trash_env's floor
    raise ModuleNotFoundError(
        "agilerl is not installed; install it, its undeclared peft dependency, then the "
        'pettingzoo trash_env needs: pip install "agilerl==2.58.0" "peft==0.21.0" && '
        'pip install "pettingzoo==1.27.0" (see docs/integrations.md)',
        name="agilerl",
    ) from error

import torch  # noqa: E402
from agilerl.algorithms.dqn import DQN  # noqa: E402
from agilerl.components.data import Transition  # noqa: E402
from agilerl.components.replay_buffer import ReplayBuffer  # noqa: E402

import trash_env  # noqa: E402


def act(agent: DQN, obs: dict, epsilon: float, counter: dict) -> int:
    """AgileRL's masked epsilon-greedy action for one observation."""
    mask = obs["action_mask"]
    action = int(
        agent.get_action(obs["observation"][None], epsilon=epsilon, action_mask=mask[None])[0]
    )
    counter["decisions"] += 1
    counter["illegal"] += int(not mask[action])
    return action


def win_rate(agent: DQN, games: int, seed: int, counter: dict) -> float:
    """The learner (greedy) against a uniformly random legal player, half the games each seat."""
    rng = np.random.default_rng(seed)
    env = trash_env.env()
    wins = 0.0
    for g in range(games):
        me = f"player_{g % 2}"

        def policy(name: str, obs: dict, me: str = me) -> int:
            if name == me:
                return act(agent, obs, 0.0, counter)
            return int(rng.choice(np.flatnonzero(obs["action_mask"])))

        for t in play_game(env, policy, seed=seed + g):
            if t.agent == me and t.done:
                wins += t.reward > 0
    return wins / games


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20000, help="decisions of training (budget)")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # AgileRL's epsilon-greedy draws from numpy's global generator
    torch.set_num_threads(1)
    env = trash_env.env()
    obs_space = env.observation_space("player_0")["observation"]
    agent = DQN(
        obs_space,
        env.action_space("player_0"),
        batch_size=64,
        lr=1e-3,
        learn_step=4,
        gamma=0.99,
        tau=0.01,
        net_config={"encoder_config": {"hidden_size": [128, 128]}},
    )
    memory = ReplayBuffer(max_size=max(args.steps, 1000))
    counter = {"decisions": 0, "illegal": 0}
    before = win_rate(agent, args.eval_games, 10_000 + args.seed, counter)

    steps = game = 0
    epsilon = 1.0
    while steps < args.steps:

        def policy(name: str, obs: dict, epsilon: float = epsilon) -> int:
            return act(agent, obs, epsilon, counter)

        for t in play_game(env, policy, seed=args.seed * 1_000_003 + game):
            transition = Transition(
                obs=t.observation["observation"][None],
                action=np.array([t.action]),
                reward=np.array([t.reward], np.float32),
                next_obs=t.next_observation["observation"][None],
                done=np.array([t.done], np.float32),
            ).to_tensordict()
            transition.batch_size = torch.Size([1])
            memory.add(transition)
            steps += 1
            if len(memory) >= agent.batch_size and steps % agent.learn_step == 0:
                agent.learn(memory.sample(agent.batch_size))
        game += 1
        epsilon = max(0.05, epsilon * 0.97)
    after = win_rate(agent, args.eval_games, 10_000 + args.seed, counter)
    summary = {
        "train_decisions": steps,
        "games": game,
        "eval_games": args.eval_games,
        "win_rate_before": before,
        "win_rate_after": after,
        "decisions": counter["decisions"],
        "illegal_moves": counter["illegal"],
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
