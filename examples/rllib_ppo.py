"""RLlib PPO on Trash: a masked MLP policy trained against `greedy` bots (default) or by
self-play (one shared policy in every seat), with its learning curve and a model file.

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py                      # the default: vs greedy, 2 players
    python examples/rllib_ppo.py --opponents self     # self-play, every seat learning
    RAY_ADDRESS=auto python examples/rllib_ppo.py --opponents self --env-runners 16

Why this shape: RLlib's PPO cannot read the AEC env's Dict observation with its default
encoders; :mod:`trash_env.integrations.rllib` hands it ``ActionMaskingTorchRLModule`` (an MLP
actor and critic, Tanh, logits + log(mask)) on ``observation="pairs"``. With ``--opponents
greedy`` the bots act inside the env (``TrashSoloMaskedEnv``, the learner's seat drawn per
game), a single-agent env that RLlib batches ``--envs`` at a time; with ``--opponents self``
every seat is an RLlib agent of one shared policy (``TrashMultiAgentEnv``, one game per env
runner). Bots are the default because they were measured faster on both counts: ~1,100
decisions/s batched against 170-190 for self-play's one game at a time, and train.py's known
result (greedy reached at ~250k decisions against greedy, self-play far below). The settings
are train.py's MaskablePPO ones: lr 1e-3, gamma 0.995, lambda 0.95, clip 0.2, entropy 0.01,
4,096 decisions per update, minibatch 1,024, 2 epochs, 128x128 Tanh, whole games paying every
finished deal too (``--round-rewards``; paying only the result learned far slower: 0.165 vs
greedy at 150k decisions against 0.398). Every ``--eval-every`` decisions and at the end the
module's actor (encoder + pi head, ``trash_rllib.policy_mlps``) is written as the model file
and evaluated against greedy and random on duplicate deals (``agents.training.pipeline``).
Sampling runs in ``--env-runners`` Ray actors (0: in the driver); with ``RAY_ADDRESS`` set (or
``--address``) ``ray.init`` joins that cluster instead of starting a local one. The env runners
count illegal moves (``trash_rllib.CountIllegal``); a masked policy makes none.

Measured default run (seed 0, 2 shared cores at load average 4-6): 402,131 decisions, vs
greedy 0.4905 [0.4686, 0.5124] and vs random 0.9895 [0.9840, 0.9931] over 2,000 games each
(1,000 duplicate deals), 0 illegal moves, 277 s of CPU, 523 s wall (training 366 s).
docs/integrations.md has the other settings tried and the Ray-cluster figures.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.training.pipeline import (
    PipelineRun,
    check_command_line,
    example_parser,
    real_number,
    whole_number,
)  # noqa: E402

NAME = "rllib_ppo"


def parse_args(argv: list[str] | None = None):
    parser = example_parser(NAME, __doc__.split("\n")[0], steps=400_000, eval_every=100_000)
    parser.add_argument(
        "--opponents",
        default="greedy",
        help="comma-separated bot specs seated in the other seats (each seat draws one per "
        "game), or 'self' for self-play with one shared policy",
    )
    parser.add_argument(
        "--round-rewards",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also pay every finished deal's share of the result (as train.py does for "
        "whole games), not only the game's end",
    )
    parser.add_argument(
        "--env-runners", type=whole_number(0, 1_024), default=0, help="sampling actors (0: driver)"
    )
    parser.add_argument(
        "--envs",
        type=whole_number(1, 4_096),
        default=16,
        help="games per env runner (bot opponents only)",
    )
    parser.add_argument(
        "--batch", type=whole_number(1, 10_000_000), default=4096, help="env steps per PPO update"
    )
    parser.add_argument("--batch-size", type=whole_number(1, 10_000_000), default=1024)
    parser.add_argument("--epochs", type=whole_number(1, 1_000), default=2)
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=1e-3)
    parser.add_argument("--verbose", action="store_true", help="print every PPO update")
    parser.add_argument(
        "--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, else local)"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":  # --help and bad flags answered before the library loads
    check_command_line(NAME, parse_args, "rllib", "ray", "torch", "matplotlib")

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations import rllib as trash_rllib  # noqa: E402, I001
import ray  # noqa: E402
import torch  # noqa: E402
from ray.rllib.algorithms.ppo import PPOConfig  # noqa: E402
from ray.rllib.core import DEFAULT_MODULE_ID  # noqa: E402


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    torch.set_num_threads(1)
    run = PipelineRun(args, NAME, library="ray", features="pairs")
    env_config: dict = {
        "num_players": args.players,
        "observation": "pairs",
        "round_rewards": args.round_rewards,
    }
    self_play = args.opponents == "self"
    if not self_play:
        env_config["opponents"] = args.opponents.split(",")
    address = args.address or os.environ.get("RAY_ADDRESS")
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        **({} if address else {"num_cpus": max(1, args.env_runners)}),
    )
    try:
        config = PPOConfig()
        if self_play:  # every seat an RLlib agent, one game per env runner
            config = (
                config.environment(trash_rllib.register(), env_config=env_config)
                .multi_agent(**trash_rllib.multi_agent_kwargs())
                .rl_module(rl_module_spec=trash_rllib.rl_module_spec((128, 128)))
            )
        else:  # bots inside the env: single-agent, --envs games batched per env runner
            config = config.environment(
                trash_rllib.register_solo(), env_config=env_config
            ).rl_module(rl_module_spec=trash_rllib.module_spec((128, 128)))
        config = (
            config.env_runners(
                num_env_runners=args.env_runners,
                num_envs_per_env_runner=1 if self_play else args.envs,
                rollout_fragment_length="auto",
            )
            .training(
                train_batch_size_per_learner=args.batch,
                minibatch_size=args.batch_size,
                num_epochs=args.epochs,
                lr=args.lr,
                gamma=0.995,
                lambda_=0.95,
                clip_param=0.2,
                entropy_coeff=0.01,
                vf_loss_coeff=0.5,
                use_kl_loss=False,
                grad_clip=0.5,
                grad_clip_by="global_norm",
            )
            .callbacks(trash_rllib.CountIllegal)
            .debugging(seed=args.seed)
        )
        algo = config.build_algo()
        steps = illegal = games = 0
        module = algo.get_module(trash_rllib.POLICY if self_play else DEFAULT_MODULE_ID)
        while steps < args.steps:
            result = algo.train()
            runners = result["env_runners"]
            steps = int(runners["num_env_steps_sampled_lifetime"])
            illegal = int(runners.get("illegal_moves", 0))
            games = int(runners.get("games", 0))
            if args.verbose:
                print(
                    f"steps {steps}: return {runners.get('episode_return_mean')}, "
                    f"length {runners.get('episode_len_mean')}, games {games}",
                    flush=True,
                )
            run.progress(steps, *trash_rllib.policy_mlps(module))
        summary = run.finish(
            steps,
            *trash_rllib.policy_mlps(module),
            illegal_moves=illegal,
            games=games,
            opponents=args.opponents,
            env_runners=args.env_runners,
            ray_address=address,
        )
        algo.stop()
    finally:
        ray.shutdown()
    return summary


if __name__ == "__main__":
    main()
