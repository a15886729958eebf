"""RLlib PPO on Trash: a masked MLP policy trained against `greedy` bots (default) or by
self-play (one shared policy in every seat), with its learning curve and a model file.

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py                      # the default: vs greedy, 2 players
    python examples/rllib_ppo.py --wilds kings        # a rules variant (train.py's rules flags)
    python examples/rllib_ppo.py --opponents self     # self-play, every seat learning
    RAY_ADDRESS=auto python examples/rllib_ppo.py --opponents self --env-runners 16

RLlib's own pieces: ``PPOConfig`` with ``ActionMaskingTorchRLModule`` (from
:mod:`trash_env.integrations.rllib`), ``--envs`` games per env runner (the bots inside a
single-agent env, or under self-play whole multi-agent games), ``--env-runners`` Ray actors,
``algo.train()`` per update. The settings sit in one block below; the model file, its curve
and the summary come from ``agents.training.pipeline``. Measured figures, why these settings
and the Ray-cluster steps: docs/integrations.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
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
# ---- settings (the flags below default to them) ----
STEPS = 1_000_000  # --steps: environment decisions of training against bots
SELF_PLAY_STEPS = 1_200_000  # --steps under --opponents self (learning from itself is slower)
EVAL_EVERY = 100_000  # --eval-every: decisions between learning-curve points
OPPONENTS = "greedy"  # --opponents: bot specs in the other seats, or "self"
ROUND_REWARDS = True  # --round-rewards: pay every finished deal too, as train.py does
ENV_RUNNERS = 0  # --env-runners: sampling Ray actors (0: the driver samples)
ENVS = 16  # --envs: games per env runner (single-agent vs bots, or multi-agent self-play)
TRAIN_BATCH = 4096  # --batch: env steps per PPO update
MINIBATCH = 1024  # --batch-size
EPOCHS = 2  # --epochs
LR = 1e-3  # --lr
ANNEAL_LR = True  # --anneal-lr: the lr falls linearly to 0 by --steps
GAMMA = 0.995
LAMBDA = 0.95
CLIP_PARAM = 0.2
ENTROPY_COEFF = 0.01
VF_LOSS_COEFF = 0.5
GRAD_CLIP = 0.5
HIDDEN = (128, 128)  # tanh layers of the actor and the critic


def parse_args(argv: list[str] | None = None):
    parser = example_parser(NAME, __doc__.split("\n")[0], steps=STEPS, eval_every=EVAL_EVERY)
    parser.set_defaults(steps=None)  # STEPS against bots, SELF_PLAY_STEPS under self-play
    parser.epilog = (
        f"--steps defaults to {STEPS:,} against bots and {SELF_PLAY_STEPS:,} under self-play."
    )
    parser.add_argument(
        "--opponents",
        default=OPPONENTS,
        help="comma-separated bot specs seated in the other seats (each seat draws one per "
        "game), or 'self' for self-play with one shared policy",
    )
    parser.add_argument(
        "--round-rewards",
        action=argparse.BooleanOptionalAction,
        default=ROUND_REWARDS,
        help="also pay every finished deal's share of the result (as train.py does for "
        "whole games), not only the game's end",
    )
    parser.add_argument(
        "--env-runners",
        type=whole_number(0, 1_024),
        default=ENV_RUNNERS,
        help="sampling actors (0: driver)",
    )
    parser.add_argument(
        "--envs",
        type=whole_number(1, 4_096),
        default=ENVS,
        help="games per env runner, stepped together with one batched forward pass (against "
        "bots, or under self-play whole multi-agent games)",
    )
    parser.add_argument(
        "--batch",
        type=whole_number(1, 10_000_000),
        default=TRAIN_BATCH,
        help="env steps per PPO update",
    )
    parser.add_argument("--batch-size", type=whole_number(1, 10_000_000), default=MINIBATCH)
    parser.add_argument("--epochs", type=whole_number(1, 1_000), default=EPOCHS)
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=LR)
    parser.add_argument(
        "--anneal-lr",
        action=argparse.BooleanOptionalAction,
        default=ANNEAL_LR,
        help="lower the learning rate linearly to 0 at --steps (at a constant rate the policy "
        "drifts away from what it learned, against bots and in self-play)",
    )
    parser.add_argument("--verbose", action="store_true", help="print every PPO update")
    parser.add_argument(
        "--address", default=None, help="Ray cluster address (default: RAY_ADDRESS, else local)"
    )
    args = parser.parse_args(argv)
    if args.steps is None:
        args.steps = SELF_PLAY_STEPS if args.opponents == "self" else STEPS
    return args


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
    run = PipelineRun(args, NAME, library="ray", features="pairs")  # owns the rules
    env_config: dict = {
        **run.env_options,
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
        if self_play:  # every seat an RLlib agent of one shared policy
            config = (
                config.environment(trash_rllib.register(), env_config=env_config)
                .multi_agent(**trash_rllib.multi_agent_kwargs())
                .rl_module(rl_module_spec=trash_rllib.rl_module_spec(HIDDEN))
            )
        else:  # bots inside the env: a single-agent env
            config = config.environment(
                trash_rllib.register_solo(), env_config=env_config
            ).rl_module(rl_module_spec=trash_rllib.module_spec(HIDDEN))
        config = (
            config.environment(normalize_actions=False, clip_actions=False)  # Discrete: no-ops
            .env_runners(
                num_env_runners=args.env_runners,
                num_envs_per_env_runner=args.envs,  # games batched per env runner
                rollout_fragment_length="auto",
            )
            .training(
                train_batch_size_per_learner=args.batch,
                minibatch_size=args.batch_size,
                num_epochs=args.epochs,
                # RLlib's piecewise-linear schedule over the env steps sampled
                lr=[[0, args.lr], [args.steps, 0.0]] if args.anneal_lr else args.lr,
                gamma=GAMMA,
                lambda_=LAMBDA,
                clip_param=CLIP_PARAM,
                entropy_coeff=ENTROPY_COEFF,
                vf_loss_coeff=VF_LOSS_COEFF,
                use_kl_loss=False,
                grad_clip=GRAD_CLIP,
                grad_clip_by="global_norm",
            )
            .callbacks(trash_rllib.CountIllegal)
            .debugging(seed=args.seed)
        )
        algo = config.build_algo()
        steps = illegal = games = 0
        updating = 0.0  # wall seconds in algo.train(): sampling and learning, no evaluation
        module_name = trash_rllib.POLICY if self_play else DEFAULT_MODULE_ID
        module = algo.get_module(module_name)
        while steps < args.steps:
            started = time.perf_counter()
            result = algo.train()
            updating += time.perf_counter() - started
            runners = result["env_runners"]
            steps = int(runners["num_env_steps_sampled_lifetime"])
            illegal = int(runners.get("illegal_moves", 0))
            games = int(runners.get("games", 0))
            if args.verbose:
                learner = result["learners"][module_name]
                print(
                    f"steps {steps}: return {runners.get('episode_return_mean')}, "
                    f"length {runners.get('episode_len_mean')}, games {games}, "
                    f"lr {learner.get('default_optimizer_learning_rate')}",
                    flush=True,
                )
            run.progress(steps, *trash_rllib.policy_mlps(module))
        # what RLlib itself runs: the games batched in each env runner that samples
        batched = algo.env_runner_group.foreach_env_runner(
            lambda runner: runner.num_envs, local_env_runner=args.env_runners == 0
        )
        summary = run.finish(
            steps,
            *trash_rllib.policy_mlps(module),
            illegal_moves=illegal,
            games=games,
            opponents=args.opponents,
            env_runners=args.env_runners,
            games_per_env_runner=batched,
            ray_address=address,
            # sampling and learning together (the learner waits for the runners, and they
            # for it), so a lower bound on each runner's sampling rate
            decisions_per_second_per_runner=round(steps / updating / max(1, args.env_runners)),
        )
        algo.stop()
    finally:
        ray.shutdown()
    return summary


if __name__ == "__main__":
    main()
