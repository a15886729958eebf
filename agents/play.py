"""Play Trash against the bots in a terminal: ``python -m agents.play --opponents greedy``.

The person sits at one seat (``--seat``, counted from 1), bots at the others; every rules
option is a flag (``--wilds kings``, ``--episode round``, ``--call-trash``, ...). The engine is
driven directly, so the "Trash!" call (``--call-trash``) is asked of the person, while bots
always call. Every game, finished or left, is written as a JSON log (rules, seed, seats, every
action and event); ``--replay FILE`` prints a log's events again, deal by deal.

Exit codes: 0 for a finished game, ``q``, or end of input; 130 for Ctrl-C; 2 for bad options
or an unreadable log.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.base import Agent, make_agent, parse_spec
from agents.human import CELL, HumanAgent, HumanQuit, cell, seat_names
from trash_env.cards import NUM_RANKS, NUM_SLOTS, card_short
from trash_env.cli import add_rules_arguments, rules_options, whole_number
from trash_env.engine import (
    ABSENT,
    DOWN,
    EVENT_KINDS,
    NATURAL,
    NUM_ENGINE_ACTIONS,
    WILD_UP,
    Event,
    Game,
)
from trash_env.match import Match
from trash_env.rules import Rules
from trash_env.text import ROW, describe, printable, result_text

LOG_FORMAT = "trash_env.play/1"
DEFAULT_LOG_DIR = Path.home() / ".trash_env" / "games"
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPT = 0, 2, 130

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.play",
        description="Play Trash (Garbage) in the terminal against bots.",
        epilog="Keys during the game: s stock, d discard, 1-10 slot, n decline a swap, "
        "trash call Trash!, t table, h help, q quit. Exit codes: 0 done or quit, "
        "130 Ctrl-C, 2 bad options.",
    )
    parser.add_argument(
        "--opponents", nargs="+", default=["greedy"], metavar="SPEC",
        help="bot specs for the other seats, in seat order (e.g. greedy counting "
        "search:rollouts=50); one spec is repeated to fill --players (default: greedy)",
    )
    parser.add_argument("--seat", type=int, default=1,
                        help="your seat, counted from 1 in turn order (default: 1)")
    parser.add_argument("--seed", type=whole_number, default=None,
                        help="seed of the deals and the bots (default: a fresh one, printed)")
    parser.add_argument("--log", type=Path, default=None, metavar="FILE",
                        help=f"write the game log here (default: {DEFAULT_LOG_DIR}/<time>.json)")
    parser.add_argument("--no-log", action="store_true", help="do not write a game log")
    parser.add_argument("--replay", type=Path, default=None, metavar="FILE",
                        help="print the events of a logged game again, and exit")
    parser.add_argument("--no-pause", action="store_true",
                        help="with --replay: do not wait for Enter between deals")
    add_rules_arguments(
        parser, {"num_players": "(default: you and one seat per --opponents spec)"}
    )
    return parser


def _bot_label(spec: str) -> str:
    """A bot's name for the table: a model file by its stem, every name made printable."""
    name = parse_spec(spec)[0]
    return printable(Path(name).stem if name.endswith(".safetensors") else name)


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


def _seeds(seed: int, n: int) -> list[int]:
    """One independent seed per seat, derived from the game's seed."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(n)]


class DealTracker:
    """The layouts of the current deal, rebuilt from the events alone (public information), to
    picture a deal at its end: the engine has already dealt the next one by then."""

    def __init__(self, rules: Rules) -> None:
        n = rules.num_players
        self.sizes = [rules.start_size] * n
        self.rounds_won = [0] * n
        self.states = [[ABSENT] * NUM_SLOTS for _ in range(n)]
        self.cards = [[-1] * NUM_SLOTS for _ in range(n)]
        self.revealed: list[set[int]] = [set() for _ in range(n)]
        self.deals = 0  # deals started

    def feed(self, event: Event) -> None:
        kind, p, card, slot = event
        if kind == "deal":
            self.deals += 1
            for q, size in enumerate(self.sizes):
                self.states[q] = [DOWN] * size + [ABSENT] * (NUM_SLOTS - size)
                self.cards[q] = [-1] * NUM_SLOTS
                self.revealed[q] = set()
        elif kind in ("place", "swap"):
            self.states[p][slot], self.cards[p][slot] = NATURAL, card
        elif kind == "wild":
            self.states[p][slot], self.cards[p][slot] = WILD_UP, card
        elif kind == "reveal":
            self.cards[p][slot] = card
            self.revealed[p].add(slot)
        elif kind == "shrink":
            self.sizes[p] = slot
            self.rounds_won[p] += 1

    def picture(self, names: Sequence[str], title: str | None = None) -> list[str]:
        """Every layout as it lay at the end of the deal (cards turned up shown as [5])."""
        lines = [title or f"The table at the end of deal {self.deals}:"]
        for p, name in enumerate(names):
            won = self.rounds_won[p]
            lines.append(f"{name}: {won} round{'' if won == 1 else 's'} won, next layout of "
                         f"{self.sizes[p]}")
            for start in (0, ROW):
                cells = []
                for s in range(start, start + ROW):
                    if s in self.revealed[p]:
                        cells.append(f"[{card_short(self.cards[p][s])}]".center(CELL))
                    else:
                        cells.append(cell(self.states[p][s], self.cards[p][s]))
                lines.append("   " + "".join(cells))
        return lines


def narrate(events: Sequence[Event], tracker: DealTracker, names: Sequence[str]) -> list[str]:
    """Event lines, with the picture of each finished deal before the next deal starts."""
    lines = []
    for event in events:
        if event.kind == "deal" and tracker.deals > 0:
            lines += tracker.picture(names)
        tracker.feed(event)
        lines.append(describe(event, names))
    return lines


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
        for line in self.tracker.picture(self.names, "The table at the end of the game:"):
            say(line)
        say("")
        say(result_text(game.truncated, game.winners, game.placings, game.rounds_won, self.names,
                        game.rules.episode))

    def log(self) -> dict:
        game = self.game
        return {
            "format": LOG_FORMAT,
            "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rules": game.rules.to_dict(),
            "seed": self.seed,
            "seat": self.seat,
            "agents": self.specs,
            "names": self.names,
            "finished": game.done,
            "truncated": game.truncated,
            "winners": list(game.winners),
            "placings": list(game.placings) if game.placings is not None else None,
            "rounds_won": game.rounds_won,
            "actions": self.actions,
            "events": [list(e) for e in game.events],
        }


def write_log(log: dict, path: Path | None, out: TextIO) -> Path | None:
    """Write the log as JSON; a failure is reported, never raised."""
    if path is None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        path = DEFAULT_LOG_DIR / f"{stamp}-seed{log['seed']}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(log) + "\n", encoding="utf-8")
    except OSError as error:
        shown = printable(str(path))
        out.write(f"Could not write the game log to {shown}: {error.strerror or error}\n")
        return None
    shown = printable(str(path))
    out.write(f"Game log written to {shown} (replay: python -m agents.play --replay {shown})\n")
    return path


MAX_LOG_BYTES = 64 * 2**20  # far above the longest game's log (docs/play.md)
MAX_DEPTH = 3  # the log's deepest value: {"events": [[kind, player, card, slot], ...]}
MAX_ITEMS = 2_000_000  # events or actions
MAX_NAME = 200  # characters of a name or an agent spec
MAX_COUNT = 10**9  # rounds won, seeds' and counts' sanity bound
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKETS = re.compile(r"[\[\]{}]")
# Per event kind: the player field (True: a seat, False: -1), the card field's range and the
# slot field's range (None: must be -1). "n", "cards" and "slots" are filled in per game.
_CARD, _NUMBER = range(0, NUM_RANKS), range(1, NUM_SLOTS + 1)
_SLOT = range(NUM_SLOTS)


def _event_fields(rules: Rules) -> dict[str, tuple[bool, range | None, range | None]]:
    n = rules.num_players
    seat = (True, None, None)
    return {
        "deal": (True, None, range(MAX_COUNT)),  # slot: the deal number, checked in order
        "draw_stock": (True, _CARD, None),
        "take_discard": (True, _CARD, None),
        "place": (True, _NUMBER, _SLOT),  # slot: the card's own, checked below
        "wild": (True, _CARD, _SLOT),
        "swap": (True, _NUMBER, _SLOT),
        "pickup": (True, _CARD, _SLOT),
        "decline": (True, _CARD, None),
        "discard": (True, _CARD, None),
        "reshuffle": (False, range(1, rules.total_cards + 1), None),
        "call": seat,
        "penalty": (True, _CARD, None),
        "claim": seat,
        "round_won": seat,
        "free_draws": seat,
        "reveal": (True, _CARD, _SLOT),
        "shrink": (True, None, range(rules.start_size)),
        "game_over": (False, range(n + 1), None),
        "truncated": (False, None, None),
    }


def _nesting_depth(text: str) -> int:
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub('""', text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a game log holds")


class _Checker:
    """Type and range checks of a parsed log, each failure a ValueError naming the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, problem: str) -> ValueError:
        return ValueError(f"{printable(str(self.path))} is not a valid game log: {field} {problem}")

    def integer(self, field: str, value: object, allowed: range) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value not in allowed:
            raise self.fail(field, f"must be an integer from {allowed.start} to "
                                   f"{allowed.stop - 1}, got {_short(value)}")
        return value

    def flag(self, field: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, f"must be true or false, got {_short(value)}")
        return value

    def text(self, field: str, value: object, limit: int = MAX_NAME) -> str:
        if not isinstance(value, str) or not 0 < len(value) <= limit:
            raise self.fail(field, f"must be a text of 1 to {limit} characters, got "
                                   f"{_short(value)}")
        return value

    def array(self, field: str, value: object, length: int | None = None,
              limit: int = MAX_ITEMS) -> list:
        if not isinstance(value, list):
            raise self.fail(field, f"must be a list, got {_short(value)}")
        if length is not None and len(value) != length:
            raise self.fail(field, f"must hold {length} entries, got {len(value)}")
        if len(value) > limit:
            raise self.fail(field, f"must hold at most {limit} entries, got {len(value)}")
        return value


def _short(value: object) -> str:
    """A value for an error message: its repr (escaped), cut to a readable length."""
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return printable(text if len(text) <= 40 else text[:37] + "...")


def validate_log(log: object, path: Path) -> dict:
    """Check every field of a parsed game log for type and range (a file from anywhere is
    hostile); return it, or raise ValueError naming the first bad field."""
    check = _Checker(path)
    if not isinstance(log, dict) or log.get("format") != LOG_FORMAT:
        raise ValueError(
            f"{printable(str(path))} is not a game log written by trash_env.play ({LOG_FORMAT})"
        )
    expected = {"format", "written", "rules", "seed", "seat", "agents", "names", "finished",
                "truncated", "winners", "placings", "rounds_won", "actions", "events"}
    missing, unknown = sorted(expected - set(log)), sorted(set(log) - expected)
    if missing:
        raise check.fail("fields", f"missing: {', '.join(missing)}")
    if unknown:
        raise check.fail("fields", f"unknown: {printable(', '.join(unknown)[:200])}")
    check.text("written", log["written"], 64)
    if not isinstance(log["rules"], dict):
        raise check.fail("rules", f"must be an object of rules options, got {_short(log['rules'])}")
    try:
        rules = Rules.from_options(**log["rules"])
    except (ValueError, TypeError) as error:
        raise check.fail("rules", f"are not valid: {printable(str(error))}") from None
    n = rules.num_players
    seats = range(n)
    if log["seed"] is not None:
        check.integer("seed", log["seed"], range(2**64))
    check.integer("seat", log["seat"], seats)
    for field in ("agents", "names"):
        for i, name in enumerate(check.array(field, log[field], n)):
            check.text(f"{field}[{i}]", name)
    finished, truncated = check.flag("finished", log["finished"]), check.flag(
        "truncated", log["truncated"])
    if truncated and not finished:
        raise check.fail("truncated", "is true for a game that did not finish")
    winners = check.array("winners", log["winners"], limit=n)
    for i, p in enumerate(winners):
        check.integer(f"winners[{i}]", p, seats)
    if len(set(winners)) != len(winners):
        raise check.fail("winners", "name a seat twice")
    if log["placings"] is not None:
        for i, place in enumerate(check.array("placings", log["placings"], n)):
            check.integer(f"placings[{i}]", place, range(1, n + 1))
    for i, won in enumerate(check.array("rounds_won", log["rounds_won"], n)):
        check.integer(f"rounds_won[{i}]", won, range(MAX_COUNT))
    for i, pair in enumerate(check.array("actions", log["actions"])):
        check.array(f"actions[{i}]", pair, 2)
        check.integer(f"actions[{i}][0] (player)", pair[0], seats)
        check.integer(f"actions[{i}][1] (action)", pair[1], range(NUM_ENGINE_ACTIONS))
    fields = _event_fields(rules)
    deals = 0
    for i, raw in enumerate(check.array("events", log["events"])):
        check.array(f"events[{i}]", raw, 4)
        kind, player, card, slot = raw
        if kind not in fields:
            raise check.fail(f"events[{i}][0] (kind)",
                             f"must be one of {', '.join(EVENT_KINDS)}, got {_short(kind)}")
        seat_field, cards, slots = fields[kind]
        check.integer(f"events[{i}][1] (player of {kind})", player,
                      seats if seat_field else range(-1, 0))
        check.integer(f"events[{i}][2] (card of {kind})", card, cards or range(-1, 0))
        check.integer(f"events[{i}][3] (slot of {kind})", slot, slots or range(-1, 0))
        if kind in ("place", "swap") and slot != card - 1:
            raise check.fail(f"events[{i}]", f"lays card {card} in slot {slot + 1}, not its own")
        if kind == "deal":
            if slot != deals:
                raise check.fail(f"events[{i}][3] (deal number)", f"must be {deals}, got {slot}")
            deals += 1
    if log["events"] and log["events"][0][0] != "deal":
        raise check.fail("events[0]", "must be the first deal")
    return log


def read_log(path: Path) -> dict:
    """Load and check a game log (at most MAX_LOG_BYTES, nested at most MAX_DEPTH deep, every
    value type- and range-checked); ValueError with a readable message if it is not one."""
    shown = printable(str(path))
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_LOG_BYTES + 1)
    except OSError as error:
        raise ValueError(f"cannot read {shown}: {error.strerror or error}") from None
    if len(data) > MAX_LOG_BYTES:
        raise ValueError(f"{shown} is not a game log: larger than {MAX_LOG_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{shown} is not a game log (not UTF-8 text: {error.reason})") from None
    if _nesting_depth(text) > MAX_DEPTH:
        raise ValueError(f"{shown} is not a game log: nested more than {MAX_DEPTH} levels deep")
    try:
        log = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise ValueError(f"{shown} is not a game log (not JSON: {printable(str(error))})") from None
    return validate_log(log, path)


def replay(log: dict, out: TextIO, pause: bool = False, stdin: TextIO | None = None) -> None:
    """Print a logged game's events deal by deal; ``pause`` waits for Enter between deals."""
    names = [printable(name) for name in log["names"]]  # never raw to the terminal
    rules = Rules.from_options(**log["rules"])
    changed = [f"{k}={v}" for k, v in rules.to_dict().items() if getattr(Rules(), k) != v]
    out.write(f"Game of {printable(log['written'])}, seed {log['seed']}: "
              + ", ".join(names) + "\n")
    out.write("Rules: " + (", ".join(changed) if changed else "standard") + "\n")
    deals: list[list[Event]] = []
    for raw in log["events"]:
        event = Event(*raw)
        if event.kind == "deal" or not deals:
            deals.append([])
        deals[-1].append(event)
    tracker = DealTracker(rules)
    for number, events in enumerate(deals, 1):
        if pause and number > 1:
            out.write("Press Enter for the next deal (q to stop): ")
            out.flush()
            line = (stdin or sys.stdin).readline()
            if not line or line.strip().lower() in ("q", "quit"):
                out.write("\n")
                return
        out.write(f"\n=== Deal {number} ===\n")
        for event in events:
            tracker.feed(event)
            out.write("  " + describe(event, names) + "\n")
        last = number == len(deals) and not log["finished"]
        title = "The table when the game was left:" if last else None
        out.write("\n".join(tracker.picture(names, title)) + "\n")
    out.write("\n")
    if not log["finished"]:
        out.write("The game was left before its end.\n")
    else:
        out.write(result_text(log["truncated"], log["winners"], log["placings"],
                              log["rounds_won"], names, rules.episode) + "\n")


def _usage_error(parser: argparse.ArgumentParser, error: Exception) -> int:
    """Report a bad option like argparse does (usage, then the reason) and return code 2."""
    parser.print_usage(sys.stderr)
    sys.stderr.write(f"{parser.prog}: error: {printable(str(error))}\n")
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
        try:
            log = read_log(args.replay)
            interactive = stdin is None and sys.stdin.isatty() and out.isatty()
            replay(log, out, pause=interactive and not args.no_pause, stdin=stdin)
        except ValueError as error:
            return _usage_error(parser, error)
        except KeyboardInterrupt:
            out.write("\nGoodbye: interrupted.\n")
            return EXIT_INTERRUPT
        return EXIT_OK
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    seat = args.seat - 1
    try:
        options = rules_options(args)
        specs = seat_specs(args.opponents, options.get("num_players"), seat)
        options["num_players"] = len(specs)
        try:
            rules = Rules.from_options(**options)
        except ValueError as error:
            raise ValueError(f"rules options: {error}") from None
        seeds = _seeds(seed, len(specs))
        bots = {p: make_agent(spec, seed=seeds[p]) for p, spec in enumerate(specs) if p != seat}
    except (ValueError, ImportError) as error:
        return _usage_error(parser, error)
    for p, bot in bots.items():
        bot.reset(seed=seeds[p])
    names = seat_names(len(specs), seat, [_bot_label(s) for s in specs])
    human = HumanAgent(stdin=stdin, stdout=stdout, names=names)
    game = Game(rules, seed=seed)
    table = Table(game, seat, bots, human, names, specs, seed)
    out.write(f"Trash: you are seat {seat + 1} of {len(specs)}; seed {seed}. "
              "Type h for help, q to leave.\n")
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


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        sys.stdout = None
        sys.exit(EXIT_OK)
