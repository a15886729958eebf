"""RLlib PPO on Trash: self-play with one shared masked policy, on N env runners.

    pip install -e ".[rllib]"
    python examples/rllib_ppo.py --iterations 5 --env-runners 2
    RAY_ADDRESS=auto python examples/rllib_ppo.py --env-runners 16   # on a running Ray cluster

Why this shape: RLlib's PPO cannot read the AEC env's Dict observation with its default
encoders; :mod:`trash_env.integrations.rllib` hands it ``ActionMaskingTorchRLModule`` and the
observation layout that module wants. Every seat plays the same policy (parameter sharing).
The env runners count every illegal move they see (an illegal move ends the game with -1 for
the offender, so a masked learner must make none) and the script prints the count. Scale: the
sampling runs in ``--env-runners`` Ray actors; with ``RAY_ADDRESS`` set (or ``--address``),
``ray.init`` joins that cluster instead of starting a local one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

# trash_env's glue first: without the extra it names what to install
from trash_env.integrations import rllib as trash_rllib  # noqa: E402, I001
import ray  # noqa: E402
from ray.rllib.algorithms.ppo import PPOConfig  # noqa: E402
from ray.rllib.callbacks.callbacks import RLlibCallback  # noqa: E402


class CountIllegal(RLlibCallback):
    """Adds each finished game's illegal moves (the env's counter) to the metrics."""

    def on_episode_end(
        self,
        *,
        episode: Any,
        metrics_logger: Any = None,
        env: Any = None,
        env_index: int = 0,
        **kwargs: Any,
    ) -> None:
        game = env.unwrapped.envs[env_index].unwrapped
        metrics_logger.log_value("illegal_moves", game.illegal_moves, reduce="lifetime_sum")
        metrics_logger.log_value("games", 1, reduce="lifetime_sum")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=5, help="PPO iterations (budget)")
    parser.add_argument("--batch", type=int, default=2000, help="env steps per iteration")
    parser.add_argument("--env-runners", type=int, default=2, help="sampling actors")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument(
        "--episode",
        choices=("game", "round"),
        default="game",
        help="an episode is a whole game or one deal (shorter)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--address",
        default=None,
        help="Ray cluster address (default: RAY_ADDRESS, else a local Ray)",
    )
    args = parser.parse_args(argv)

    address = args.address or os.environ.get("RAY_ADDRESS")
    ray.init(
        address=address,
        include_dashboard=False,
        log_to_driver=False,
        **({} if address else {"num_cpus": max(2, args.env_runners)}),
    )
    try:
        env_name = trash_rllib.register()
        config = (
            PPOConfig()
            .environment(
                env_name, env_config={"num_players": args.players, "episode": args.episode}
            )
            .multi_agent(**trash_rllib.multi_agent_kwargs())
            .rl_module(rl_module_spec=trash_rllib.rl_module_spec())
            .env_runners(
                num_env_runners=args.env_runners,
                num_envs_per_env_runner=1,
                rollout_fragment_length="auto",
            )
            .training(
                train_batch_size_per_learner=args.batch,
                minibatch_size=256,
                num_epochs=4,
                lr=3e-4,
                entropy_coeff=0.01,
            )
            .callbacks(CountIllegal)
            .debugging(seed=args.seed)
        )
        algo = config.build_algo()
        illegal = games = steps = 0
        for i in range(args.iterations):
            result = algo.train()
            runners = result["env_runners"]
            illegal = int(runners.get("illegal_moves", 0))
            games = int(runners.get("games", 0))
            steps = int(
                result.get(
                    "num_env_steps_sampled_lifetime",
                    runners.get("num_env_steps_sampled_lifetime", 0),
                )
            )
            print(
                f"iteration {i + 1}: env steps {steps}, games {games}, illegal moves "
                f"{illegal}, mean return of player_0 "
                f"{runners.get('agent_episode_returns_mean', {}).get('player_0')}",
                flush=True,
            )
        summary = {
            "iterations": args.iterations,
            "env_runners": args.env_runners,
            "env_steps": steps,
            "games": games,
            "illegal_moves": illegal,
        }
        algo.stop()
    finally:
        ray.shutdown()
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
