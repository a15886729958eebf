"""A fixed, seeded AEC workload for instruction counts (``valgrind --tool=callgrind``), which a
loaded machine does not disturb the way it does wall-clock timing.

    valgrind --tool=callgrind python benchmarks/aec_steps.py --steps 3000 --players 2

Runs 200 warm-up agent steps, then ``--steps`` more, of ``trash_env.env()`` under the loop of
``benchmarks/run.py --only aec`` (random legal actions from a seeded ``random.Random``). The
instructions of one agent step are the difference between ``--steps N`` and ``--steps 0`` runs,
divided by N (the difference cancels the imports, the env's creation and the warm-up). Run the
python executable itself under valgrind (not a launcher script) with ``PYTHONHASHSEED=0`` so that
repeated runs count the same instructions.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from trash_env.env import env as make_env  # noqa: E402
from trash_env.rules import MAX_PLAYERS, MIN_PLAYERS  # noqa: E402

WARM_UP = 200


def run_steps(env, choice, steps: int) -> None:
    """``steps`` agent steps: ``last()``, a random legal action, reset when the game is over."""
    done = 0
    while done < steps:
        for _agent in env.agent_iter(env.num_agents):
            obs, _reward, termination, truncation, _info = env.last()
            action = (
                None
                if termination or truncation
                else choice(np.flatnonzero(obs["action_mask"]).tolist())
            )
            env.step(action)
            done += 1
            if all(env.terminations.values()) or all(env.truncations.values()):
                env.reset()
            if done >= steps:
                break


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3000, help="measured agent steps")
    parser.add_argument("--players", type=int, default=2, help="2 to 6")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error(f"--steps must be >= 0 (got {args.steps})")
    if not MIN_PLAYERS <= args.players <= MAX_PLAYERS:
        parser.error(f"--players must be {MIN_PLAYERS} to {MAX_PLAYERS} (got {args.players})")
    env = make_env(num_players=args.players)
    env.reset(seed=args.seed)
    choice = random.Random(args.seed).choice
    run_steps(env, choice, WARM_UP)
    run_steps(env, choice, args.steps)
    env.close()


if __name__ == "__main__":
    main()
