"""``python -m trash_env.exact build --max-size K``: solve the rounds up to K and write the
tables (docs/skill.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from trash_env.exact.tables import MAX_K, build, cache_dir, table_name
from trash_env.rules import WILDS, Rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trash_env.exact", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("build", help="solve the rounds up to --max-size, write tables")
    make.add_argument("--max-size", type=int, required=True, help=f"K, from 1 to {MAX_K}")
    make.add_argument("--wilds", choices=WILDS[:2], default="jacks")
    make.add_argument("--jokers", action="store_true")
    make.add_argument("--out", type=Path, help="the file (default: the cache folder)")
    args = parser.parse_args(argv)
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
    for sizes, found in sorted(tables.rounds.items()):
        print(f"  round {sizes}: {len(found.keys)} states, start values {found.start_values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
