"""TorchRL on Trash: masked self-play PPO on the AEC env through TorchRL's ``PettingZooWrapper``.

    pip install -e ".[torchrl]"
    python examples/torchrl_ppo.py --frames 50000

The pieces are TorchRL's own: ``PettingZooWrapper(use_mask=True)`` puts each seat's
``action_mask`` and whether the seat acts now (``mask``) in the tensordict; a
``ProbabilisticActor`` with ``MaskedCategorical`` per seat (one MLP shared by every seat:
self-play) collects with a ``Collector``; ``GAE`` computes each seat's advantages and
``ClipPPOLoss`` updates the actor and critic.

Credit in a turn-based game: every frame carries every seat's observation and reward (the
final rewards are paid on whoever made the last move), so GAE runs along the whole batch for
each seat, with that seat's rewards, dones and values; the opponent's moves are part of the
seat's environment. The loss then takes only the frames where the seat acted (its ``mask``):
the others hold no decision of its own.

It prints, as one JSON line, the win rate of the greedy learner against a uniformly random
legal player (half the games in each seat) before and after training, the number of PPO
updates and how far the parameters moved, and the illegal moves among the acting seats'
actions in training and evaluation (0: the mask holds at every decision).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations.torchrl import make_env  # noqa: E402, I001
import torch  # noqa: E402
from tensordict import NestedKey, TensorDict  # noqa: E402
from tensordict.nn import TensorDictModule, TensorDictSequential  # noqa: E402
from torch import nn  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.envs.utils import ExplorationType, set_exploration_type  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor  # noqa: E402
from torchrl.objectives import ClipPPOLoss  # noqa: E402
from torchrl.objectives.value import GAE  # noqa: E402

import trash_env  # noqa: E402
from trash_env.integrations import play_game  # noqa: E402

OBS = "observation"  # the wrapper keeps PettingZoo's dict: (seat, "observation", "observation")


def mlp(inputs: int, outputs: int, hidden: int) -> nn.Sequential:
    """Two tanh layers (CleanRL's PPO layout); one for the policy, one for the value."""
    return nn.Sequential(
        nn.Linear(inputs, hidden),
        nn.Tanh(),
        nn.Linear(hidden, hidden),
        nn.Tanh(),
        nn.Linear(hidden, outputs),
    )


def actor(
    net: nn.Module, obs_key: NestedKey, mask_key: NestedKey, action_key: NestedKey
) -> ProbabilisticActor:
    """``net``'s logits, masked by ``mask_key``, as a distribution over legal actions; the
    sampled action's log-probability goes beside it (``<action>_log_prob``), for PPO."""
    logits_key = (*action_key[:-1], "logits") if isinstance(action_key, tuple) else "logits"
    return ProbabilisticActor(
        TensorDictModule(net, in_keys=[obs_key], out_keys=[logits_key]),
        in_keys={"logits": logits_key, "mask": mask_key},
        out_keys=[action_key],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )


def flat_decisions(batch: TensorDict, groups: list[str]) -> TensorDict:
    """The frames where each seat acted, every seat's in one flat batch under plain keys
    (one network plays every seat, so its loss takes them all)."""
    parts = []
    for g in groups:
        acted = batch[g, "mask"][:, 0]
        parts.append(
            TensorDict(
                {
                    "observation": batch[g, OBS, OBS][:, 0],
                    "action_mask": batch[g, "action_mask"][:, 0],
                    "action": batch[g, "action"][:, 0],
                    "action_log_prob": batch[g, "action_log_prob"][:, 0],
                    "advantage": batch[g, "advantage"][:, 0],
                    "value_target": batch[g, "value_target"][:, 0],
                },
                batch_size=[batch.shape[0]],
            )[acted]
        )
    return torch.cat(parts)


def count_illegal(batch: TensorDict, groups: list[str]) -> tuple[int, int]:
    """(actions of the seats that were to act, how many of them their mask refused)."""
    acted = illegal = 0
    for g in groups:
        to_act = batch[g, "mask"].reshape(-1).bool()
        mask = batch[g, "action_mask"].reshape(-1, batch[g, "action_mask"].shape[-1])
        legal = mask.gather(1, batch[g, "action"].reshape(-1, 1)).squeeze(1)
        acted += int(to_act.sum())
        illegal += int((to_act & ~legal).sum())
    return acted, illegal


def win_rate(policy: ProbabilisticActor, games: int, seed: int, counter: dict) -> float:
    """The learner (its most likely legal action) against a uniformly random legal player on
    the plain AEC env, half the games in each seat; counts its decisions and illegal ones."""
    rng = np.random.default_rng(seed)
    env = trash_env.env()
    wins = 0
    for game in range(games):
        me = f"player_{game % 2}"

        def choose(name: str, obs: dict, me: str = me) -> int:
            if name != me:
                return int(rng.choice(np.flatnonzero(obs["action_mask"])))
            td = TensorDict(
                {
                    "observation": torch.as_tensor(obs["observation"]),
                    "action_mask": torch.as_tensor(obs["action_mask"], dtype=torch.bool),
                }
            )
            with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
                action = int(policy(td)["action"])
            counter["decisions"] += 1
            counter["illegal"] += int(not obs["action_mask"][action])
            return action

        for t in play_game(env, choose, seed=seed + game):
            if t.agent == me and t.done:
                wins += t.reward > 0
    return wins / games


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=50000, help="env steps of training (budget)")
    parser.add_argument("--batch", type=int, default=2000, help="frames per collected batch")
    parser.add_argument("--eval-games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args(argv)
    gamma, lmbda, epochs, minibatch, hidden = 0.995, 0.95, 4, 256, 128
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", module="torchrl")  # "tested with PettingZoo 1.24.3"

    env = make_env(seed=args.seed)
    groups = list(env.group_map)  # one seat per group: "player_0", "player_1"
    obs_size = env.observation_spec[groups[0], OBS, OBS].shape[-1]
    n_actions = env.action_spec[groups[0], "action"].space.n
    env.close()
    policy_net, value_net = mlp(obs_size, n_actions, hidden), mlp(obs_size, 1, hidden)

    # collection: every seat's actor (same network) reads its own observation and mask
    seat_actors = TensorDictSequential(
        *[actor(policy_net, (g, OBS, OBS), (g, "action_mask"), (g, "action")) for g in groups]
    )
    # GAE per seat, along the whole batch (the opponent's frames are the seat's environment)
    estimators = []
    for g in groups:
        critic = TensorDictModule(value_net, in_keys=[(g, OBS, OBS)], out_keys=[(g, "state_value")])
        gae = GAE(gamma=gamma, lmbda=lmbda, value_network=critic, average_gae=False)
        gae.set_keys(
            reward=(g, "reward"),
            done=(g, "done"),
            terminated=(g, "terminated"),
            value=(g, "state_value"),
            advantage=(g, "advantage"),
            value_target=(g, "value_target"),
        )
        estimators.append(gae)
    # the loss: the same networks under plain keys, on the flat batch of decisions
    flat_actor = actor(policy_net, "observation", "action_mask", "action")
    flat_critic = TensorDictModule(value_net, in_keys=["observation"], out_keys=["state_value"])
    loss_module = ClipPPOLoss(
        flat_actor,
        flat_critic,
        clip_epsilon=0.2,
        entropy_coeff=0.01,
        critic_coeff=0.5,
        loss_critic_type="l2",
        normalize_advantage=True,
    )
    optimizer = torch.optim.Adam(loss_module.parameters(), lr=args.lr, eps=1e-5)

    counter = {"decisions": 0, "illegal": 0}
    before = win_rate(flat_actor, args.eval_games, 10_000 + args.seed, counter)
    start_params = [p.detach().clone() for p in loss_module.parameters()]

    collector = Collector(
        lambda: make_env(seed=args.seed),
        seat_actors,
        frames_per_batch=args.batch,
        total_frames=args.frames,
    )
    frames = games = decisions = illegal = updates = 0
    start = time.perf_counter()
    for batch in collector:
        frames += batch.numel()
        games += int(batch["next", "done"].sum())
        acted, bad = count_illegal(batch, groups)
        decisions, illegal = decisions + acted, illegal + bad
        with torch.no_grad():
            for gae in estimators:
                gae(batch)
        data = flat_decisions(batch, groups)
        for _ in range(epochs):
            for idx in torch.randperm(data.shape[0]).split(minibatch):
                losses = loss_module(data[idx])
                loss = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(loss_module.parameters(), 0.5)
                optimizer.step()
                updates += 1
        collector.update_policy_weights_()
        print(
            f"frames {frames}, games {games}, "
            f"{frames / (time.perf_counter() - start):.0f} frames/s",
            flush=True,
        )
    collector.shutdown()
    train_seconds = time.perf_counter() - start
    params = zip(loss_module.parameters(), start_params, strict=True)
    moved = float(torch.sqrt(sum(((p.detach() - q) ** 2).sum() for p, q in params)))
    after = win_rate(flat_actor, args.eval_games, 10_000 + args.seed, counter)
    summary = {
        "frames": frames,
        "games": games,
        "train_decisions": decisions,
        "ppo_updates": updates,
        "param_change": round(moved, 4),
        "eval_games": args.eval_games,
        "win_rate_before": before,
        "win_rate_after": after,
        "illegal_moves": illegal + counter["illegal"],
        "decisions": decisions + counter["decisions"],
        "train_seconds": round(train_seconds, 1),
    }
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
