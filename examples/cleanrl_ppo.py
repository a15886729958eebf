"""A CleanRL-style single-file masked PPO on the Trash AEC env: self-play, one shared policy.

    python examples/cleanrl_ppo.py --steps 50000

No extra needed (torch comes with the ``train`` extra). Why a hand-written loop needs help:
in a turn-based game an agent's reward arrives on other agents' moves and at the game's end,
and a Trash turn is several decisions in a row. ``trash_env.integrations.play_game`` yields one
transition per decision with the reward credited to that decision (everything the agent earned
up to its next decision) and the final reward on every agent's last decision; this loop stores
them per agent, computes GAE along each agent's own chain of decisions, and runs PPO's clipped
update with the illegal logits masked. It prints the win rate of the learner against a random
player (both seats) before and after training and the number of illegal moves (0: the mask
holds at every decision).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

import trash_env  # noqa: E402
from trash_env.integrations import play_game  # noqa: E402


class Agent(nn.Module):
    """Actor and critic MLPs (CleanRL's layout) over the observation vector."""

    def __init__(self, obs_size: int, n_actions: int, hidden: int = 128) -> None:
        super().__init__()
        self.critic = nn.Sequential(
            nn.Linear(obs_size, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )
        self.actor = nn.Sequential(
            nn.Linear(obs_size, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, n_actions),
        )

    def dist(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
        logits = self.actor(obs).masked_fill(~mask, -1e9)  # illegal actions: probability 0
        return torch.distributions.Categorical(logits=logits)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)


def make_policy(agent: Agent, rng: np.random.Generator, counter: dict, greedy: bool = False):
    """A play_game policy: samples from the masked distribution (argmax if ``greedy``) and
    keeps (log-prob, value) as the transition's extra."""

    def policy(name: str, obs: dict) -> tuple[int, tuple[float, float]]:
        o = torch.as_tensor(obs["observation"]).unsqueeze(0)
        m = torch.as_tensor(obs["action_mask"], dtype=torch.bool).unsqueeze(0)
        with torch.no_grad():
            d = agent.dist(o, m)
            probs = d.probs[0].numpy().astype(np.float64)
            if greedy:
                action = int(probs.argmax())
            else:
                action = int(rng.choice(probs.size, p=probs / probs.sum()))
            logp = float(d.log_prob(torch.tensor([action]))[0])
            value = float(agent.value(o)[0])
        counter["decisions"] += 1
        counter["illegal"] += int(not obs["action_mask"][action])
        return action, (logp, value)

    return policy


def win_rate(agent: Agent, games: int, seed: int, counter: dict) -> float:
    """The learner (greedy) against a uniformly random legal player, half the games each seat."""
    rng = np.random.default_rng(seed)
    learner = make_policy(agent, rng, counter, greedy=True)
    wins = 0.0
    env = trash_env.env()
    for g in range(games):
        me = f"player_{g % 2}"

        def policy(name: str, obs: dict, me: str = me):
            if name == me:
                return learner(name, obs)
            return int(rng.choice(np.flatnonzero(obs["action_mask"])))

        for t in play_game(env, policy, seed=seed + g):
            if t.agent == me and t.done:
                wins += t.reward > 0
    return wins / games


def gae(rewards, values, dones, gamma: float, lam: float):
    """Advantages and returns along one agent's chain of decisions (value 0 after the end)."""
    adv = np.zeros(len(rewards), np.float32)
    last = 0.0
    for i in reversed(range(len(rewards))):
        next_value = 0.0 if dones[i] else values[i + 1]
        delta = rewards[i] + gamma * next_value - values[i]
        last = delta + gamma * lam * (0.0 if dones[i] else last)
        adv[i] = last
    return adv, adv + np.asarray(values[: len(rewards)], np.float32)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50000, help="decisions of training (budget)")
    parser.add_argument("--rollout", type=int, default=2048, help="decisions per PPO update")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=2.5e-4)
    args = parser.parse_args(argv)
    gamma, lam, clip, epochs, minibatch, ent_coef, vf_coef = 0.99, 0.95, 0.2, 4, 256, 0.01, 0.5
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    env = trash_env.env()
    obs_size = env.observation_space("player_0")["observation"].shape[0]
    agent = Agent(obs_size, env.action_space("player_0").n)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    counter = {"decisions": 0, "illegal": 0}
    before = win_rate(agent, args.eval_games, 10_000 + args.seed, counter)
    policy = make_policy(agent, rng, counter)

    done_steps, game, start = 0, 0, time.perf_counter()
    while done_steps < args.steps:
        obs, masks, actions, logps, advs, rets = [], [], [], [], [], []
        collected = 0
        while collected < args.rollout:
            chains: dict[str, list] = {}
            for t in play_game(env, policy, seed=args.seed * 1_000_003 + game):
                chains.setdefault(t.agent, []).append(t)
            game += 1
            for chain in chains.values():
                values = [t.extra[1] for t in chain] + [0.0]
                a, r = gae([t.reward for t in chain], values, [t.done for t in chain], gamma, lam)
                obs += [t.observation["observation"] for t in chain]
                masks += [t.observation["action_mask"] for t in chain]
                actions += [t.action for t in chain]
                logps += [t.extra[0] for t in chain]
                advs.append(a)
                rets.append(r)
                collected += len(chain)
        done_steps += collected
        b_obs = torch.as_tensor(np.stack(obs))
        b_mask = torch.as_tensor(np.stack(masks), dtype=torch.bool)
        b_act = torch.as_tensor(actions)
        b_logp = torch.as_tensor(logps, dtype=torch.float32)
        b_adv = torch.as_tensor(np.concatenate(advs))
        # normalised over the whole batch: the last minibatch may hold a single decision
        b_adv = (b_adv - b_adv.mean()) / (b_adv.std(correction=0) + 1e-8)
        b_ret = torch.as_tensor(np.concatenate(rets))
        for _ in range(epochs):
            order = torch.as_tensor(rng.permutation(len(b_act)))
            for s in range(0, len(order), minibatch):
                i = order[s : s + minibatch]
                d = agent.dist(b_obs[i], b_mask[i])
                ratio = (d.log_prob(b_act[i]) - b_logp[i]).exp()
                adv = b_adv[i]
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                v_loss = 0.5 * (agent.value(b_obs[i]) - b_ret[i]).pow(2).mean()
                loss = pg - ent_coef * d.entropy().mean() + vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        print(
            f"decisions {done_steps}, games {game}, "
            f"{done_steps / (time.perf_counter() - start):.0f} decisions/s",
            flush=True,
        )
    after = win_rate(agent, args.eval_games, 10_000 + args.seed, counter)
    summary = {
        "train_decisions": done_steps,
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
