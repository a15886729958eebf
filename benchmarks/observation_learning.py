"""How fast a plain network learns from each form of the observation (docs/environment.md,
"The pairs observation").

    python benchmarks/observation_learning.py [--steps 300000] [--games 300] [--seed 0]

For each ``observation`` form (``plain``, ``pairs``) it trains sb3-contrib's MaskablePPO with
its stock MLP (no feature extractor: what an outside pipeline does) on the batched env against
``greedy``, with train.py's PPO settings, then plays the deterministic policy ``--games``
whole 2-player games against ``greedy`` (seats alternating; the same deal seeds for both
forms) and prints the win rate with its 95% interval (normal approximation).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.pairs import OBSERVATIONS  # noqa: E402
from trash_env.solo import TrashSoloEnv  # noqa: E402


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def train_and_score(observation: str, steps: int, games: int, seed: int) -> tuple[float, float]:
    """(training seconds, win rate against greedy) of one form."""
    import torch
    from sb3_contrib import MaskablePPO

    from trash_env.vector.env import TrashVecEnv

    torch.set_num_threads(1)
    env = TrashVecEnv(256, ["greedy"], seed=seed, round_rewards=True, observation=observation)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        learning_rate=1e-3,
        n_steps=16,
        batch_size=1024,
        n_epochs=2,
        gamma=0.995,
        ent_coef=0.01,
        seed=seed,
        policy_kwargs=dict(net_arch=[128, 128]),
    )
    start = time.perf_counter()
    model.learn(steps)
    wall = time.perf_counter() - start
    play = TrashSoloEnv(opponents=["greedy"], observation=observation)
    wins = 0
    for game in range(games):
        obs, _ = play.reset(seed=1_000_000 + seed * games + game, options={"seat": game % 2})
        done = False
        while not done:
            action, _ = model.predict(obs, action_masks=play.action_masks(), deterministic=True)
            obs, _, terminated, truncated, info = play.step(int(action))
            done = terminated or truncated
        wins += bool(info["won"])
    return wall, wins / games


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=positive, default=300_000, help="PPO steps per form")
    parser.add_argument("--games", type=positive, default=300, help="evaluation games per form")
    parser.add_argument("--seed", type=int, default=0, help="seed of training and deals")
    args = parser.parse_args(argv)
    for observation in OBSERVATIONS:
        wall, rate = train_and_score(observation, args.steps, args.games, args.seed)
        half = 1.96 * math.sqrt(rate * (1 - rate) / args.games)
        print(
            f"observation={observation}: {args.steps} steps in {wall:.0f} s; against greedy "
            f"{rate:.3f} [{max(rate - half, 0):.3f}, {min(rate + half, 1):.3f}] "
            f"({args.games} whole games)",
            flush=True,
        )


if __name__ == "__main__":
    main()
