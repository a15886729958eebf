"""TorchRL on Trash: the AEC env through TorchRL's ``PettingZooWrapper`` with action masks, one
masked actor shared by every seat, data gathered by its ``Collector``.

    pip install -e ".[torchrl]"
    python examples/torchrl_masked_collect.py --frames 5000

What it shows: ``PettingZooWrapper(use_mask=True)`` puts each seat's ``action_mask`` and
whether the seat acts now (``mask``) in the tensordict; a ``ProbabilisticActor`` with
``MaskedCategorical`` reads the mask, so every action it takes is legal. The script counts
the actions of the seats that were to act and how many of them their mask refused (0), and
the games finished. It collects only (no training loop): TorchRL's losses (``ClipPPOLoss``,
``DQNLoss``) take the same actor.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations.torchrl import make_env  # noqa: E402, I001
import torch  # noqa: E402
from tensordict.nn import TensorDictModule, TensorDictSequential  # noqa: E402
from torch import nn  # noqa: E402
from torchrl.collectors import Collector  # noqa: E402
from torchrl.modules import MaskedCategorical, ProbabilisticActor  # noqa: E402


def masked_actor(env, hidden: int = 64) -> TensorDictSequential:
    """One MLP shared by every seat (group); each seat's logits masked by its action mask."""
    groups = list(env.group_map)
    obs_size = env.observation_spec[groups[0], "observation", "observation"].shape[-1]
    n_actions = env.action_spec[groups[0], "action"].space.n
    net = nn.Sequential(nn.Linear(obs_size, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
    parts = []
    for g in groups:
        parts.append(TensorDictModule(net, in_keys=[(g, "observation", "observation")],
                                      out_keys=[(g, "logits")]))
        parts.append(ProbabilisticActor(
            TensorDictModule(nn.Identity(), in_keys=[(g, "logits")], out_keys=[(g, "_l")]),
            in_keys={"logits": (g, "_l"), "mask": (g, "action_mask")},
            out_keys=[(g, "action")],
            distribution_class=MaskedCategorical,
            return_log_prob=False,
        ))
    return TensorDictSequential(*parts)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=5000, help="env steps to collect (budget)")
    parser.add_argument("--batch", type=int, default=500, help="frames per collected batch")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", module="torchrl")  # "tested with PettingZoo 1.24.3"
    env = make_env(seed=args.seed)
    actor = masked_actor(env)
    collector = Collector(lambda: make_env(seed=args.seed), actor,
                                  frames_per_batch=args.batch, total_frames=args.frames)
    acted = illegal = games = frames = 0
    start = time.perf_counter()
    for batch in collector:
        frames += batch.numel()
        games += int(batch["next", "done"].sum())
        for g in env.group_map:
            to_act = batch[g, "mask"].reshape(-1).bool()
            mask = batch[g, "action_mask"].reshape(-1, batch[g, "action_mask"].shape[-1])
            action = batch[g, "action"].reshape(-1)
            legal = mask.gather(1, action.unsqueeze(1)).squeeze(1)
            acted += int(to_act.sum())
            illegal += int((to_act & ~legal).sum())
    collector.shutdown()
    elapsed = time.perf_counter() - start
    summary = {"frames": frames, "games": games, "decisions": acted, "illegal_moves": illegal,
               "frames_per_s": round(frames / elapsed)}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
