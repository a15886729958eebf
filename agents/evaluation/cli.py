"""The command line of evaluate.py (``trash-evaluate``): duplicate-deal tournaments between
agents.

    python evaluate.py --agents greedy random --players 2 --games 10000 --episode game \
        --seed 0 --workers 2 --json results.json --csv results.csv --png results.png

    python evaluate.py --agents pretrained greedy random --sizes --deals 1000 --workers 2

    python evaluate.py --agents MODEL.safetensors greedy --players 6 --one-seat --deals 5000

``--one-seat`` seats the first agent once against copies of the second, each seat in turn
over duplicate deals, and reports its share of the games against par (``1 / players``) with
its 95% interval: the figure a learner's target is judged by.

``--sizes`` plays the first agent against each of the others in whole games and in one-round
games at start sizes 1 to 10 (or the sizes given), with ``greedy`` (``--reference``) against
the same opponents on the same deals: one row per setting (:mod:`agents.evaluation.sizes`).

Every rules option of ``trash_env.Rules`` is a flag (``--wilds kings``, ``--jokers``,
``--losers-reveal``, ...). A model file trained under other rules of play than the game's is
refused with the flags of its own game (``--other-rules`` seats it anyway, with a warning: its
strength there was never measured). How line-ups, seatings and duplicate deals are chosen,
and how the figures are counted: :mod:`agents.evaluation`. Every option, output path
included, is checked before the first game: a bad one exits at once with code 2 and the
reason. Exit codes: 0 done, 1 a worker process died or a file could not be written (one
line; the previous file is left whole), 2 bad options, 130 Ctrl-C, 143 SIGTERM (one line
said, no traceback; the worker processes end with the evaluation, :mod:`agents.evaluation.pool`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.evaluation.batched import ENGINES
from agents.evaluation.report import Report
from agents.evaluation.runner import BACKENDS, MAX_GAMES, MAX_SAVED_GAMES, MAX_WORKERS, evaluate
from agents.evaluation.sizes import DEFAULT_REFERENCE, SizesReport, evaluate_sizes, settings
from agents.evaluation.tournament import SEATINGS
from agents.policies.model_file import other_rules_of_play
from trash_env.agent import make_agent
from trash_env.cli import (
    Parser,
    add_rules_arguments,
    check_int,
    extra_install,
    integer_in,
    need_modules,
    program_name,
    rules_options,
    run_interruptible,
    whole_number,
)
from trash_env.files import IMAGE_SUFFIXES, check_output_path, describe_os_error
from trash_env.rules import Rules


def build_parser() -> Parser:
    parser = Parser(
        prog=program_name("python evaluate.py", "trash-evaluate"),
        description="Duplicate-deal tournament between Trash agents: every line-up in every "
        "seat rotation on the same shuffled decks; win rates with 95% Wilson intervals, "
        "head-to-head rates, first-seat advantage and TrueSkill ratings.",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        metavar="SPEC",
        help="agent specs (greedy, counting, random, search:rollouts=50, "
        "pretrained, PATH.safetensors); fewer than --players: every multiset "
        "with each present; more: every combination of --players of them. "
        ".zip models are refused (loading one runs the code it holds)",
    )
    parser.add_argument(
        "--games",
        type=integer_in(1, MAX_GAMES),
        default=1000,
        help=f"games wanted, rounded up to whole duplicate deals, at most "
        f"{MAX_GAMES:,} (default: 1000)",
    )
    parser.add_argument(
        "--deals",
        type=integer_in(1, MAX_GAMES),
        default=None,
        help="number of duplicate deals instead of --games",
    )
    parser.add_argument("--seed", type=whole_number, default=0, help="master seed (default: 0)")
    parser.add_argument(
        "--workers",
        type=integer_in(1, MAX_WORKERS),
        default=1,
        help=f"processes, 1 to {MAX_WORKERS}; the numbers do not depend on it (default: 1)",
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local processes, or Ray tasks on the Ray cluster RAY_ADDRESS names "
        "(else a local Ray of --workers CPUs); same numbers (default: local)",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto: the batched engine (trash_env.vector, every core) when every agent has a "
        "batched form (random, greedy, counting, deterministic model files), else the "
        "reference engine; the same games either way, the report names the one used "
        "(default: auto)",
    )
    parser.add_argument(
        "--one-seat",
        action="store_true",
        help="seat the first of two --agents once against copies of the second in every "
        "other seat, each seat in turn over duplicate deals, and report its share of the "
        "games against par (1/players) with its 95%% interval: the figure the learning "
        "targets use (e.g. --agents MODEL greedy --players 6 --one-seat)",
    )
    parser.add_argument(
        "--seatings",
        choices=SEATINGS,
        default="rotations",
        help="seat orders per line-up (default: rotations)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the report as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the per-agent and pair rows as CSV")
    parser.add_argument(
        "--png",
        metavar="FILE",
        help="draw win rates and head-to-head as PNG (FILE ends in .png; needs matplotlib: "
        'pip install "trash-env[plot]")',
    )
    parser.add_argument(
        "--save-games",
        metavar="DIR",
        help=f"write every game's log into DIR as <6-digit game index>.json "
        f"(the terminal game's log format: python -m agents.play --replay "
        f"FILE) and list them in --json; at most {MAX_SAVED_GAMES:,} games",
    )
    parser.add_argument(
        "--sizes",
        nargs="*",
        type=whole_number,
        default=None,
        metavar="N",
        help="per-size table: the first of --agents against each of the others "
        "in whole games, then in one-round games at each start size N (none "
        "given: 1 to 10); --deals/--games count per setting and opponent",
    )
    parser.add_argument(
        "--reference",
        default=DEFAULT_REFERENCE,
        metavar="SPEC",
        help="with --sizes: the agent also played against the same opponents "
        "on the same deals, to compare with; none for no reference "
        f"(default: {DEFAULT_REFERENCE})",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--quiet", action="store_true", help="do not print the table")
    parser.add_argument(
        "--other-rules",
        action="store_true",
        help="seat a model file in a game whose rules of play differ from those it was "
        "trained under (default: refused, naming the flags of its own game)",
    )
    add_rules_arguments(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run evaluate.py with ``argv`` (default: the command line); returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return run_interruptible(parser.prog, lambda: _run(parser, args))


def _run(parser: Parser, args: argparse.Namespace) -> int:
    report: Report | SizesReport
    try:
        check_args(args)
        rules = Rules.from_options(**rules_options(args))
        if not args.other_rules:
            check_trained_rules(args.agents, rules)
        if args.sizes is not None:
            report = _sizes(args, rules)
        else:
            report = evaluate(
                args.agents,
                rules,
                games=args.games,
                seed=args.seed,
                workers=args.workers,
                progress=not args.no_progress,
                deals=args.deals,
                seatings=args.seatings,
                backend=args.backend,
                save_games=args.save_games,
                engine=args.engine,
                one_seat=args.one_seat,
            )
    except (ValueError, ImportError) as error:
        return parser.refuse(error)
    except RuntimeError as error:  # a worker died: not a bad option
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a saved game could not be written (a full disk): not an option
        print(f"{parser.prog}: error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(report.table())
    try:
        if args.json:
            report.write_json(args.json)
        if args.csv:
            report.write_csv(args.csv)
        if args.png and isinstance(report, Report):  # check_args refuses --png with --sizes
            report.plot(args.png)
    except OSError as error:  # the previous file, if any, is left whole (atomic writes)
        print(f"{parser.prog}: error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    return 0


def _sizes(args: argparse.Namespace, rules: Rules) -> SizesReport:
    """``--sizes``: the per-size table (agents/evaluation/sizes.py), printed and written like a
    report
    (``--png`` is refused for it by :func:`check_args`)."""
    return evaluate_sizes(
        args.agents[0],
        args.agents[1:],
        rules,
        sizes=args.sizes or None,
        reference=None if args.reference == "none" else args.reference,
        games=args.games,
        deals=args.deals,
        seed=args.seed,
        workers=args.workers,
        seatings=args.seatings,
        backend=args.backend,
        progress=not args.no_progress,
    )


def check_trained_rules(specs: Sequence[str], rules: Rules) -> None:
    """``ValueError`` when one of ``specs`` is a model file trained under other rules of play
    than ``rules`` (the player count aside: a pretrained model switches to its own), naming the
    differences and the flags of the model's game, before any game is played."""
    for spec in dict.fromkeys(specs):
        agent = make_agent(spec, seed=0)
        if hasattr(agent, "use_players"):  # pretrained: the model of this game's count
            agent.use_players(rules.num_players)
        sidecar = getattr(agent, "sidecar", None)
        if sidecar is None:  # a bot
            continue
        differences, flags = other_rules_of_play(sidecar, rules)
        if differences:
            own = " ".join(flags) if flags else "its sidecar's rules"
            raise ValueError(
                f"{spec} was trained under other rules than this game's: "
                f"{', '.join(differences)}; evaluate it in its own game ({own}), or pass "
                "--other-rules to seat it anyway"
            )


def check_args(args: argparse.Namespace) -> None:
    """What argparse cannot check, before any game: bounds and output paths (``ValueError``
    naming the flag and the allowed values)."""
    check_int("--games", args.games, 1, MAX_GAMES)
    if args.deals is not None:
        check_int("--deals", args.deals, 1, MAX_GAMES)
    check_int("--workers", args.workers, 1, MAX_WORKERS)
    check_int("--seed", args.seed, 0, 2**63 - 1)
    if args.json:
        check_output_path("--json", args.json)
    if args.csv:
        check_output_path("--csv", args.csv)
    if args.png:
        check_output_path("--png", args.png, IMAGE_SUFFIXES)
        need_modules("--png", extra_install("plot"), "matplotlib")
    if args.backend == "ray":
        need_modules("--backend ray", extra_install("ray"), "ray")
    if args.one_seat:
        if len(args.agents) != 2:
            raise ValueError(
                "--one-seat seats the first of --agents once against copies of the second: "
                f"give exactly two agents, got {len(args.agents)}"
            )
        if args.sizes is not None:
            raise ValueError(
                "--sizes already counts the first agent's one seat in every row: "
                "leave out --one-seat"
            )
    if args.sizes is not None:
        if len(args.agents) < 2:
            raise ValueError(
                "--sizes evaluates the first of --agents against the others: give "
                "at least two agents"
            )
        if args.png:
            raise ValueError("--png draws a tournament report; --sizes writes --json and --csv")
        if args.save_games:
            raise ValueError(
                "--save-games saves a tournament's games; it cannot be combined with --sizes"
            )
        if "episode" in rules_options(args):
            raise ValueError(
                "--episode cannot be combined with --sizes, which plays whole "
                "games and one-round games (its rows)"
            )
        if args.reference != "none":
            from agents.bots.base import make_agent

            make_agent(args.reference, seed=0)  # a bad --reference fails before any game
        settings(Rules.from_options(**rules_options(args)), args.sizes or None)
    elif args.reference != DEFAULT_REFERENCE:
        raise ValueError("--reference is an option of --sizes")
    outputs = [Path(x).resolve() for x in (args.json, args.csv, args.png) if x]
    if len(set(outputs)) != len(outputs):
        raise ValueError("--json, --csv and --png must name different files")
