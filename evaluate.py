"""Duplicate-deal tournaments between agents, from the command line.

    python evaluate.py --agents greedy random --players 2 --games 10000 --episode game \
        --seed 0 --workers 2 --json results.json --csv results.csv --png results.png

Every rules option of ``trash_env.Rules`` is a flag (``--wilds kings``, ``--jokers``,
``--losers-reveal``, ...). How line-ups, seatings and duplicate deals are chosen, and how the
figures are counted: :mod:`agents.evaluation`. Exit codes: 0 done, 2 bad options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import fields

from agents.evaluation import SEATINGS, evaluate
from trash_env.rules import EPISODE, FIRST_PLAYER, RESHUFFLE, WILDS, Rules

_FLAG_NAMES = {
    "num_players": ["--players", "--num-players"],
    "num_decks": ["--decks", "--num-decks"],
}
_CHOICES = {"wilds": WILDS, "first_player": FIRST_PLAYER, "reshuffle": RESHUFFLE,
            "episode": EPISODE}


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number 0 or more, got {text!r}")
    return value


def _option_docs() -> dict[str, str]:
    """Each rules option's sentence, from the ``Attributes:`` list of the Rules docstring."""
    docs: dict[str, str] = {}
    name = None
    for line in (Rules.__doc__ or "").split("Attributes:")[-1].splitlines():
        head, colon, text = line.strip().partition(": ")
        if colon and head.isidentifier() and line.startswith(" " * 8 + head):
            name = head
            docs[name] = text
        elif name and line.strip():
            docs[name] += " " + line.strip()
    return {k: v.replace("``", "").replace('"', "").replace("%", "%%") for k, v in docs.items()}


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """One flag per Rules field (defaults: the standard game); read back with rules_options."""
    group = parser.add_argument_group("rules options (RULES.md; defaults: the standard game)")
    defaults, docs = Rules(), _option_docs()
    for f in fields(Rules):
        flags = _FLAG_NAMES.get(f.name, ["--" + f.name.replace("_", "-")])
        default = getattr(defaults, f.name)
        kwargs: dict = {"dest": f.name, "default": argparse.SUPPRESS}
        if isinstance(default, bool):
            kwargs["action"] = argparse.BooleanOptionalAction
            kwargs["help"] = f"(default: {'on' if default else 'off'})"
        elif f.name in _CHOICES:
            kwargs["choices"] = _CHOICES[f.name]
            kwargs["help"] = f"(default: {default})"
        else:
            kwargs["type"] = int
            kwargs["metavar"] = "N"
            kwargs["help"] = f"(default: {'not set' if default is None else default})"
        kwargs["help"] = f"{docs.get(f.name, f.name)} {kwargs['help']}"
        group.add_argument(*flags, **kwargs)


def rules_options(args: argparse.Namespace) -> dict:
    return {f.name: getattr(args, f.name) for f in fields(Rules) if hasattr(args, f.name)}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python evaluate.py",
        description="Duplicate-deal tournament between Trash agents: every line-up in every "
        "seat rotation on the same shuffled decks; win rates with 95%% Wilson intervals, "
        "head-to-head rates, first-seat advantage and TrueSkill ratings.",
    )
    parser.add_argument("--agents", nargs="+", required=True, metavar="SPEC",
                        help="agent specs (greedy, counting, random, search:rollouts=50, "
                        "PATH.zip); fewer than --players: every multiset with each present; "
                        "more: every combination of --players of them")
    parser.add_argument("--games", type=_count, default=1000,
                        help="games wanted, rounded up to whole duplicate deals (default: 1000)")
    parser.add_argument("--deals", type=_count, default=None,
                        help="number of duplicate deals instead of --games")
    parser.add_argument("--seed", type=_count, default=0, help="master seed (default: 0)")
    parser.add_argument("--workers", type=_count, default=1,
                        help="processes; the numbers do not depend on it (default: 1)")
    parser.add_argument("--seatings", choices=SEATINGS, default="rotations",
                        help="seat orders per line-up (default: rotations)")
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the per-agent and pair rows as CSV")
    parser.add_argument("--png", metavar="FILE", help="draw win rates and head-to-head as PNG")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--quiet", action="store_true", help="do not print the table")
    add_rules_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        rules = Rules.from_options(**rules_options(args))
        report = evaluate(
            args.agents, rules, games=args.games, seed=args.seed, workers=args.workers,
            progress=not args.no_progress, deals=args.deals, seatings=args.seatings,
        )
    except (ValueError, ImportError) as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(report.table())
    if args.json:
        report.write_json(args.json)
    if args.csv:
        report.write_csv(args.csv)
    if args.png:
        report.plot(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
