"""``python -m trash_env.exact build --max-size K``: solve the rounds up to K and write the
tables; ``python -m trash_env.exact report --max-size K``: every exact figure of docs/skill.md
(per round: policy pairs, greedy's gap, the skill index; whole games from every start)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from trash_env.exact.tables import MAX_K, build, cache_dir, pairs, table_name
from trash_env.files import atomic_write_text
from trash_env.rules import WILDS, Rules


def report(rules: Rules, max_size: int) -> dict:
    """Per round up to ``max_size`` its exact figures, and the whole game's win probability
    from every pair of sizes with either seat to start."""
    from tqdm import tqdm

    from trash_env.exact.analysis import game_win_probability, round_report

    rounds = []
    for sizes in pairs(max_size):
        with tqdm(desc=f"round {sizes}", unit=" states", unit_scale=True) as bar:
            rounds.append(round_report(sizes, rules, bar.update))
    round_win = {}
    for entry in rounds:
        a, b = entry["sizes"]
        for first in (0, 1):
            p = entry["optimal_seat0_wins"][first]
            round_win[(a, b, first)] = p
            round_win[(b, a, 1 - first)] = 1 - p
    games = [
        {
            "sizes": [a, b],
            "first": first,
            "seat0_wins": game_win_probability(round_win, (a, b), first),
        }
        for a in range(1, max_size + 1)
        for b in range(1, max_size + 1)
        for first in (0, 1)
    ]
    return {
        "rules": {"wilds": rules.wilds, "jokers": rules.jokers},
        "rounds": rounds,
        "games": games,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trash_env.exact", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="solve the rounds up to --max-size, write tables")
    make.add_argument("--max-size", type=int, required=True, help=f"K, from 1 to {MAX_K}")
    make.add_argument("--wilds", choices=WILDS[:2], default="jacks")
    make.add_argument("--jokers", action="store_true")
    make.add_argument("--out", type=Path, help="the file (default: the cache folder)")
    figures = commands.add_parser("report", help="every exact figure up to --max-size, as JSON")
    figures.add_argument("--max-size", type=int, required=True, help=f"K, from 1 to {MAX_K}")
    figures.add_argument("--wilds", choices=WILDS[:2], default="jacks")
    figures.add_argument("--jokers", action="store_true")
    figures.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.command == "report":
        try:
            figures_found = report(Rules(wilds=args.wilds, jokers=args.jokers), args.max_size)
            text = json.dumps(figures_found, indent=1)
            if args.json:
                atomic_write_text(args.json, text + "\n")
        except (ValueError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(text)
        return 0
    try:
        rules = Rules(wilds=args.wilds, jokers=args.jokers)
        began = time.perf_counter()
        tables = build(rules, args.max_size)
        path = args.out or cache_dir() / table_name(rules, args.max_size)
        tables.save(path)
    except (ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    states = sum(len(r.keys) for r in tables.rounds.values())
    print(
        f"{path}: {states} decision states in {len(tables.rounds)} rounds, "
        f"{time.perf_counter() - began:.1f} s, {path.stat().st_size} bytes"
    )
    for sizes, solved in sorted(tables.rounds.items()):
        print(f"  round {sizes}: {len(solved.keys)} states, start values {solved.start_values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
