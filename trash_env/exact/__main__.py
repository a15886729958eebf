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


def report(rules: Rules, max_size: int, counting: bool = False) -> dict:
    """Per round up to ``max_size`` its exact figures (``counting``: also counting's, from a
    second pass on keys with the pile's top), and the whole game's win probability from every
    pair of sizes with either seat to start."""
    from tqdm import tqdm

    from trash_env.exact.analysis import counting_report, game_win_probability, round_report

    rounds = []
    for sizes in pairs(max_size):
        with tqdm(desc=f"round {sizes}", unit=" states", unit_scale=True) as bar:
            rounds.append(round_report(sizes, rules, bar.update))
        if counting:
            with tqdm(desc=f"round {sizes}, counting", unit=" states", unit_scale=True) as bar:
                rounds[-1]["counting"] = counting_report(sizes, rules, bar.update)
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


MAX_REPORT = 64 << 20


def check_report(path: Path, sizes: tuple[int, int], deals: int, seed: int) -> int:
    """Play every matchup of the report's round ``sizes`` in the engine (``deals`` rounds
    each) and print the exact win rate, the engine's with its standard error, and how many
    standard errors apart they are; 1 when one is 3 or more apart."""
    from trash_env.exact.montecarlo import engine_win_rate
    from trash_env.exact.tables import tables_for

    if path.stat().st_size > MAX_REPORT:
        raise ValueError(f"{path} is over {MAX_REPORT >> 20} MiB: not a report")
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        rules = Rules(wilds=found["rules"]["wilds"], jokers=bool(found["rules"]["jokers"]))
        entry = next(r for r in found["rounds"] if tuple(r["sizes"]) == tuple(sorted(sizes)))
        rates = dict(entry["win_rates"])
        rates.update(entry.get("counting", {}).get("win_rates", {}))
        max_size = max(max(r["sizes"]) for r in found["rounds"])
    except StopIteration:
        raise ValueError(f"{path} has no round {sizes}") from None
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise ValueError(f"{path} is not a report of python -m trash_env.exact report") from None
    if deals < 2:
        raise ValueError(f"--deals must be at least 2, got {deals}")
    tables = tables_for(rules, max_size)
    apart = 0.0
    for name, exact in rates.items():
        mine, _, against = str(name).partition(" vs ")
        if mine == against:
            continue
        rate, error = engine_win_rate(sizes, mine, against, deals, tables, rules, seed)
        z = abs(rate - float(exact)) / error if error > 0 else 0.0
        apart = max(apart, z)
        print(f"{name}: exact {float(exact):.4f}, engine {rate:.4f} +- {error:.4f} ({z:.2f} SE)")
    return 0 if apart < 3 else 1


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
    figures.add_argument(
        "--counting", action="store_true", help="also counting's matchups (a second pass)"
    )
    check = commands.add_parser(
        "check", help="hold a report's win rates at one round to play in the real engine"
    )
    check.add_argument("--report", type=Path, required=True, help="a report's JSON file")
    check.add_argument("--sizes", type=int, nargs=2, required=True, metavar=("A", "B"))
    check.add_argument("--deals", type=int, default=2000, help="engine rounds per matchup")
    check.add_argument("--seed", type=int, default=0)
    seer = commands.add_parser(
        "clairvoyant", help="W(clairvoyant vs random) per round up to --max-size, sampled deals"
    )
    seer.add_argument("--max-size", type=int, required=True, help=f"K, from 1 to {MAX_K}")
    seer.add_argument("--deals", type=int, default=20_000, help="decks shuffled per round")
    seer.add_argument("--seed", type=int, default=0)
    seer.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.command == "clairvoyant":
        from trash_env.exact.clairvoyant import win_rate

        try:
            if not 1 <= args.max_size <= MAX_K:
                raise ValueError(f"--max-size must be from 1 to {MAX_K}, got {args.max_size}")
            rows = []
            for sizes in pairs(args.max_size):
                rows.append(win_rate(sizes, args.deals, args.seed))
                low, high = rows[-1]["win_rate"]
                print(f"{sizes}: {low:.4f} to {high:.4f} +- {rows[-1]['standard_error']:.4f}")
            if args.json:
                atomic_write_text(args.json, json.dumps(rows, indent=1) + "\n")
        except (ValueError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
    if args.command == "check":
        try:
            return check_report(args.report, tuple(args.sizes), args.deals, args.seed)
        except (ValueError, OSError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    if args.command == "report":
        try:
            figures_found = report(
                Rules(wilds=args.wilds, jokers=args.jokers), args.max_size, args.counting
            )
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
        print(
            f"  round {sizes}: {len(solved.keys)} states ({solved.open_states} left open by the "
            f"equations, settled by the cut-off recursion, {solved.alternating_states} of them "
            f"alternating with its parity), start values {solved.start_values}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
