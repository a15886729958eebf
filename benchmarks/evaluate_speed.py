"""Games/s of ``evaluate.py`` on the batched engine against the reference path, in one run.

    python benchmarks/evaluate_speed.py [--games 10000] [--small 2000] [--repeats 1]
                                        [--long] [--only 2p,model,3p,6p,long]
                                        [--json benchmarks/evaluate_speed.json]

Each row is a whole ``python evaluate.py ...`` process, start-up included, timed from its start
to its exit; games/s = games played / wall seconds. The reference is today's fast path of the
reference engine, ``--engine reference --workers 2``; against it ``--engine auto --workers 2``,
what a user types, which picks the batched engine for these agents (the script checks the report
names it) and splits the deals over the two processes when each gets
``agents.evaluation.batched.SPLIT_MIN_GAMES`` games or more (else plays them in one). Every
repetition runs a case's two commands one after the other, so the ratio is taken pair by pair
under the same load; medians are reported.

Cases (issue 27's targets: at 10,000 two-player games at least 5x; at 100,000 at least 10x):

- 2 players, ``greedy`` against ``random``, ``--games`` games;
- 2 players, a model file (the shipped 2-player model, by its path) against ``greedy``;
- 3 and 6 players, ``greedy`` against ``random`` (every multiset line-up), ``--small`` games;
- with ``--long``: 2 players, ``greedy`` against ``random``, 100,000 games.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.files import atomic_write_text  # noqa: E402

MODEL = ROOT / "agents" / "policies" / "models" / "pretrained_2p.safetensors"


def timed(agents: list[str], games: int, players: int, engine: str, workers: int) -> dict:
    """Run evaluate.py once; wall seconds, games played and the engine its report names."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        command = [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--agents",
            *agents,
            "--players",
            str(players),
            "--games",
            str(games),
            "--workers",
            str(workers),
            "--engine",
            engine,
            "--no-progress",
            "--quiet",
            "--json",
            str(out),
        ]
        start = time.perf_counter()
        subprocess.run(command, check=True, cwd=ROOT)
        wall = time.perf_counter() - start
        report = json.loads(out.read_text())
    played = report["games"] if isinstance(report["games"], int) else report["games"]["count"]
    return {"wall": wall, "games": played, "engine": report.get("engine", "")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=10_000, help="2-player games (10000)")
    parser.add_argument("--small", type=int, default=2_000, help="3- and 6-player games (2000)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--long", action="store_true", help="also 100,000 two-player games")
    parser.add_argument(
        "--only", default="", help="comma-separated cases: 2p, model, 3p, 6p, long (all)"
    )
    parser.add_argument("--json", type=Path, default=HERE / "evaluate_speed.json")
    args = parser.parse_args(argv)
    for name in ("games", "small", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    cases = {
        "2p": ("2p greedy vs random", ["greedy", "random"], 2, args.games),
        "model": ("2p model file vs greedy", [str(MODEL), "greedy"], 2, args.games),
        "3p": ("3p greedy vs random", ["greedy", "random"], 3, args.small),
        "6p": ("6p greedy vs random", ["greedy", "random"], 6, args.small),
        "long": ("2p greedy vs random, 100k", ["greedy", "random"], 2, 100_000),
    }
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = sorted(set(only) - set(cases))
    if unknown:
        parser.error(f"--only: unknown case(s) {', '.join(unknown)}; allowed: {', '.join(cases)}")
    if not only:
        only = [c for c in cases if c != "long" or args.long]
    load_before = os.getloadavg()[0]
    # Load (or compile) the batched kernels once, outside any timing: the bots' and the
    # model's, both forms (a batch of 1,000 games or more runs the parallel ones).
    timed(["greedy", "random"], 1000, 2, "batched", 1)
    timed([str(MODEL), "greedy"], 1000, 2, "batched", 1)
    rows = []
    for key in only:
        label, agents, players, games = cases[key]
        reference, batched = [], []
        for rep in range(args.repeats):
            ref = timed(agents, games, players, "reference", 2)
            bat = timed(agents, games, players, "auto", 2)
            if not bat["engine"].startswith("batched"):
                raise SystemExit(f"{label}: --engine auto did not pick the batched engine")
            reference.append(ref["games"] / ref["wall"])
            batched.append(bat["games"] / bat["wall"])
            print(
                f"{label:28s} rep {rep + 1}: reference --workers 2 {reference[-1]:8,.0f} "
                f"games/s, batched --workers 2 {batched[-1]:9,.0f} games/s, "
                f"{batched[-1] / reference[-1]:.2f}x ({ref['games']:,} games)",
                flush=True,
            )
        ratios = [b / r for b, r in zip(batched, reference, strict=True)]
        rows.append(
            {
                "case": label,
                "players": players,
                "games": games,
                "reference_games_per_s": statistics.median(reference),
                "batched_games_per_s": statistics.median(batched),
                "ratio": statistics.median(ratios),
                "ratios": ratios,
            }
        )
    print()
    print(f"{'case':28s} {'games':>8s} {'reference':>12s} {'batched':>12s} {'ratio':>7s}")
    for row in rows:
        print(
            f"{row['case']:28s} {row['games']:>8,} {row['reference_games_per_s']:>12,.0f} "
            f"{row['batched_games_per_s']:>12,.0f} {row['ratio']:>6.2f}x"
        )
    meta = {
        "command": "python benchmarks/evaluate_speed.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.json, json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
