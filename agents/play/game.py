"""Play Trash against the bots in a terminal: ``python -m agents.play --opponents greedy``.

The person sits at one seat (``--seat``, counted from 1), bots at the others; every rules
option is a flag (``--wilds kings``, ``--episode round``, ``--call-trash``, ...). The engine is
driven directly, so the "Trash!" call (``--call-trash``) is asked of the person, while bots
always call. Every game, finished or left, is written as a JSON log (rules, seed, seats, every
action and event; :mod:`agents.play.game_log`); ``--replay FILE`` plays a log's actions again on
the engine and prints that game deal by deal, saying where the log's own record disagrees
(:mod:`agents.play.replay`).

Exit codes: 0 for a finished game, ``q``, or end of input; 130 for Ctrl-C; 2 for bad options,
an unreadable log or one whose actions do not replay.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from agents.bots.base import Agent, check_fits, make_agent, parse_spec
from agents.play.game_log import DEFAULT_LOG_DIR, read_log, table_log, write_log
from agents.play.human import HumanAgent, HumanQuit, bot_label, seat_names, seat_seeds
from agents.play.replay import DealTracker, narrate, replay
from trash_env.cli import Parser, add_rules_arguments, program_name, rules_options, whole_number
from trash_env.engine import Game
from trash_env.files import check_output_path
from trash_env.match import Match
from trash_env.rules import Rules
from trash_env.text import printable, result_text

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPT = 0, 2, 130


def build_parser() -> Parser:
    parser = Parser(
        prog=program_name("python -m agents.play", "trash-play"),
        description="Play Trash (Garbage) in the terminal against bots.",
        epilog="Keys during the game: s stock, d discard, 1-10 slot, n decline a swap, "
        "trash call Trash!, t table, h help, q quit. Exit codes: 0 done or quit, "
        "130 Ctrl-C, 2 bad options.",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["greedy"],
        metavar="SPEC",
        help="bot specs for the other seats, in seat order (e.g. greedy counting "
        "search:rollouts=50); one spec is repeated to fill --players (default: greedy)",
    )
    parser.add_argument(
        "--seat", type=int, default=1, help="your seat, counted from 1 in turn order (default: 1)"
    )
    parser.add_argument(
        "--seed",
        type=whole_number,
        default=None,
        help="seed of the deals and the bots (default: a fresh one, printed)",
    )
    parser.add_argument(
        "--log",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"write the game log here (default: {DEFAULT_LOG_DIR}/<time>.json)",
    )
    parser.add_argument("--no-log", action="store_true", help="do not write a game log")
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="FILE",
        help="print the events of a logged game again, and exit",
    )
    parser.add_argument(
        "--no-pause", action="store_true", help="with --replay: do not wait for Enter between deals"
    )
    add_rules_arguments(parser, {"num_players": "(default: you and one seat per --opponents spec)"})
    return parser


def seat_specs(opponents: Sequence[str], num_players: int | None, seat: int) -> list[str]:
    """The agent spec of every seat: ``"human"`` at ``seat`` (0-based), the opponents at the
    other seats in seat order. Raises ValueError on a count that does not fit."""
    if "human" in (parse_spec(spec)[0] for spec in opponents):
        raise ValueError("--opponents takes bots only; your own seat is --seat")
    n = num_players if num_players is not None else len(opponents) + 1
    if len(opponents) == 1:
        bots = list(opponents) * (n - 1)
    elif len(opponents) == n - 1:
        bots = list(opponents)
    else:
        raise ValueError(
            f"--players {n} needs {n - 1} opponent spec(s), or one to use at every seat; "
            f"got {len(opponents)}: {' '.join(opponents)}"
        )
    if not 0 <= seat < n:
        raise ValueError(f"--seat must be 1 to {n}, got {seat + 1}")
    bots.insert(seat, "human")
    return bots


class Table:
    """One game in progress: the engine, the person, the bots and the log."""

    def __init__(
        self,
        game: Game,
        seat: int,
        bots: dict[int, Agent],
        human: HumanAgent,
        names: Sequence[str],
        specs: Sequence[str],
        seed: int | None,
    ) -> None:
        self.game, self.seat, self.bots, self.human = game, seat, bots, human
        self.names = list(names)
        self.specs = list(specs)
        self.seed = seed
        self.actions: list[tuple[int, int]] = []
        self.shown = 0  # events already shown to the person
        self.tracker = DealTracker(game.rules)

    def _news(self) -> list[str]:
        events = self.game.events[self.shown :]
        self.shown = len(self.game.events)
        return narrate(events, self.tracker, self.names)

    def play(self) -> None:
        """Play to the end of the game (HumanQuit, EOFError, KeyboardInterrupt pass through).
        The match plays the bots (and calls "Trash!" for them); the person answers their own
        call."""
        game = self.game
        seated = [self.bots.get(p) for p in range(game.num_players)]
        match = Match(game, seated, own_calls=(self.seat,), on_action=self._record)
        while True:
            match.advance()
            if game.done:
                break
            self.human.tell(self._news())
            self.human.deal = game.deal_number + 1
            action = int(self.human.ask(match.views[self.seat]))
            self._record(self.seat, action)
            game.step(action)
        self.finish()

    def _record(self, player: int, action: int) -> None:
        self.actions.append((player, int(action)))

    def finish(self) -> None:
        """The last events, the final table and the result."""
        game, say = self.game, self.human.say
        news = self._news()
        if news:
            say("")
            for line in news:
                say("  " + line)
        say("")
        for line in self.tracker.picture(
            self.names, "The table at the end of the game:", next_deal=False
        ):
            say(line)
        say("")
        say(
            result_text(
                game.truncated,
                game.winners,
                game.placings,
                game.rounds_won,
                self.names,
                game.rules.episode,
            )
        )

    def log(self) -> dict:
        """The game log as it stands (:func:`agents.play.game_log.table_log`)."""
        return table_log(self)


def _usage_error(parser: Parser, error: Exception) -> int:
    """Report a bad option like argparse does (a short usage line, then the reason); code 2."""
    return parser.refuse(printable(str(error)))


def _replay(
    parser: Parser,
    path: Path,
    no_pause: bool,
    out: TextIO,
    stdin: TextIO | None,
) -> int:
    """``--replay``: the log's game replayed on the engine; a file that is not a game log, or
    whose actions do not replay, is refused in one line with exit code 2."""
    try:
        log = read_log(path)  # its messages name the file
    except ValueError as error:
        return _refuse(parser, str(error))
    interactive = stdin is None and sys.stdin.isatty() and out.isatty()
    try:
        replay(log, out, pause=interactive and not no_pause, stdin=stdin)
    except ValueError as error:
        return _refuse(parser, f"cannot replay {printable(str(path))}: {error}")
    except KeyboardInterrupt:
        out.write("\nGoodbye: interrupted.\n")
        return EXIT_INTERRUPT
    return EXIT_OK


def _refuse(parser: Parser, reason: str) -> int:
    """One line on stderr (no usage block: the options were fine) and exit code 2."""
    sys.stderr.write(f"{parser.prog}: error: {printable(reason)}\n")
    return EXIT_USAGE


def main(
    argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Run the program; returns the exit code (streams default to the terminal)."""
    out = stdout if stdout is not None else sys.stdout
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse has printed its message
        return int(stop.code or 0)
    if args.replay is not None:
        return _replay(parser, args.replay, args.no_pause, out, stdin)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    seat = args.seat - 1
    try:
        if args.log is not None and not args.no_log:  # a game is not played to be lost
            check_output_path("--log", args.log)
        options = rules_options(args)
        specs = seat_specs(args.opponents, options.get("num_players"), seat)
        options["num_players"] = len(specs)
        try:
            rules = Rules.from_options(**options)
        except ValueError as error:
            raise ValueError(f"rules options: {error}") from None
        seeds = seat_seeds(seed, len(specs))
        bots = {p: make_agent(spec, seed=seeds[p]) for p, spec in enumerate(specs) if p != seat}
        for bot in bots.values():
            check_fits(bot, rules)  # a model for another player count fails before the deal
    except (ValueError, ImportError) as error:
        return _usage_error(parser, error)
    for p, bot in bots.items():
        bot.reset(seed=seeds[p])
    names = seat_names(len(specs), seat, [bot_label(s) for s in specs])
    human = HumanAgent(stdin=stdin, stdout=stdout, names=names)
    game = Game(rules, seed=seed)
    table = Table(game, seat, bots, human, names, specs, seed)
    out.write(
        f"Trash: you are seat {seat + 1} of {len(specs)}; seed {seed}. "
        "Type h for help, q to leave.\n"
    )
    code = EXIT_OK
    try:
        table.play()
    except (HumanQuit, EOFError):
        out.write("\nGoodbye: you left the game.\n")
    except KeyboardInterrupt:
        out.write("\nGoodbye: interrupted.\n")
        code = EXIT_INTERRUPT
    except Exception:  # a bug: keep the game for the report, then fail loudly
        if not args.no_log:
            write_log(table.log(), args.log, out)
        raise
    if not args.no_log:
        write_log(table.log(), args.log, out)
    out.flush()
    return code


def _answer_ctrl_c() -> None:
    """Let Ctrl-C end the game whenever the game owns its terminal, even when it was started
    with SIGINT ignored: a non-interactive shell's background jobs (``cmd &`` in a script) and
    some runners pass that on, and a person at the table must still be able to stop it."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return
    try:
        fd = sys.stdin.fileno()
        if not os.isatty(fd) or os.tcgetpgrp(fd) != os.getpgrp():
            return  # not our terminal: whoever ignored Ctrl-C meant it
    except (OSError, ValueError, AttributeError):
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)


def console() -> int:
    """``python -m agents.play`` and ``trash-play``: :func:`main` on the real terminal."""
    _answer_ctrl_c()
    try:
        return main()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        sys.stdout = None
        return EXIT_OK
