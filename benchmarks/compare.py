"""Before/after: the engine and observation encoder of a git revision against the working tree's,
in one process, measured interleaved (the figures drift with the load, the ratios hold).

    python benchmarks/compare.py --rev 7e6f8b9 [--repeats 5] [--seconds 2]

- engine: decisions/s of ``Game`` alone (the loop of ``run.py --only engine``);
- encode: ``encode_observation`` calls/s at a mid-game state, 2 and 6 players;
- aec: agent steps/s of ``trash_env.env()`` (the ``run.py --only aec`` loop), with the env's
  ``Game``, ``encode_observation`` and ``action_mask`` swapped for the revision's.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))
sys.path.append(str(ROOT / "benchmarks"))

from equivalence import load_revision  # noqa: E402
from run import aec_loop, engine_loop  # noqa: E402

import trash_env  # noqa: E402
from trash_env import engine as new_engine  # noqa: E402
from trash_env import observation as new_observation  # noqa: E402
from trash_env.rules import Rules  # noqa: E402

# The module (the package's attribute ``trash_env.env`` is the env() function).
env_module = importlib.import_module("trash_env.env")


def encode_rate(engine, observation, players: int, seconds: float) -> float:
    game = engine.Game(Rules(num_players=players), seed=1)
    for _ in range(40):
        if game.done:
            break
        game.step(game.legal_actions()[0])
    encode, calls = observation.encode_observation, 0
    start = time.perf_counter()
    while True:
        for _ in range(200):
            encode(game, 0)
        calls += 200
        elapsed = time.perf_counter() - start
        if elapsed > seconds:
            return calls / elapsed


def use(engine, observation) -> None:
    """Point the env module at this engine and encoder."""
    env_module.Game = engine.Game
    env_module.encode_observation = observation.encode_observation
    env_module.action_mask = observation.action_mask
    env_module.CALL_TRASH = engine.CALL_TRASH
    env_module.Decision = engine.Decision


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", required=True, help="the 'before' git revision")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    old_engine, old_observation = load_revision(args.rev)
    versions = {"before": (old_engine, old_observation), "after": (new_engine, new_observation)}

    def engine_rate(engine, observation):
        return engine_loop(args.seconds, 0, engine.Game)

    def aec_rate(engine, observation):
        use(engine, observation)
        try:
            return aec_loop(trash_env.env, args.seconds, 0)
        finally:
            use(new_engine, new_observation)

    measures = {
        "engine decisions/s": engine_rate,
        "encode/s, 2 players": lambda e, o: encode_rate(e, o, 2, args.seconds),
        "encode/s, 6 players": lambda e, o: encode_rate(e, o, 6, args.seconds),
        "aec agent steps/s": aec_rate,
    }
    print(f"{args.rev} (before) against the working tree (after), {args.repeats} repetitions")
    print("| measure | before | after | after / before |\n|---|---:|---:|---:|")
    for name, measure in measures.items():
        figures = {"before": [], "after": []}
        for _ in range(args.repeats):
            for version, (engine, observation) in versions.items():
                figures[version].append(measure(engine, observation))
        pairs = zip(figures["after"], figures["before"], strict=True)
        ratio = statistics.median(a / b for a, b in pairs)
        before, after = (statistics.median(figures[v]) for v in ("before", "after"))
        print(f"| {name} | {before:,.0f} | {after:,.0f} | {ratio:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
