"""The game log: one JSON file per game (rules, seed, seats, every action and event), written by
the terminal game (:mod:`agents.play`), evaluate.py's ``--save-games`` and any other front end,
read back by the replays. :func:`build_log` makes the log of a game record, finished or not;
:func:`write_log` writes it atomically; :func:`read_log` reads one from a path, bounded, and
:func:`validate_log` checks every field (a file from anywhere is hostile). The fields are in
docs/play.md.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol, TextIO

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import EVENT_KINDS, NUM_ENGINE_ACTIONS, Game
from trash_env.files import atomic_write_text
from trash_env.rules import Rules
from trash_env.text import printable

LOG_FORMAT = "trash_env.play/1"
DEFAULT_LOG_DIR = Path.home() / ".trash_env" / "games"


def build_log(
    game: Game,
    *,
    seed: int | None,
    seat: int | None,
    specs: Sequence[str],
    names: Sequence[str],
    actions: Sequence[tuple[int, int]],
) -> dict:
    """The log of ``game`` as it stands (finished or left mid-game): ``seed`` it was dealt
    from, ``seat`` the person's (None: bots only), each seat's agent spec and shown name, and
    every ``(player, action)`` played so far in order."""
    return {
        "format": LOG_FORMAT,
        "written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "rules": game.rules.to_dict(),
        "seed": seed,
        "seat": seat,
        "agents": list(specs),
        "names": list(names),
        "finished": game.done,
        "truncated": game.truncated,
        "winners": list(game.winners),
        "placings": list(game.placings) if game.placings is not None else None,
        "rounds_won": list(game.rounds_won),
        "actions": [[int(p), int(a)] for p, a in actions],
        "events": [list(e) for e in game.events],
    }


class LoggedTable(Protocol):
    """A table a person plays at (the terminal's, the web page's): what its log records."""

    game: Game
    specs: list[str]
    names: list[str]
    actions: list[tuple[int, int]]

    @property
    def seed(self) -> int | None: ...  # the deal's seed (None: not known)

    @property
    def seat(self) -> int | None: ...  # the person's seat


def table_log(table: LoggedTable) -> dict:
    """The log of a person's table as it stands (:func:`build_log` of its game and seating)."""
    return build_log(
        table.game,
        seed=table.seed,
        seat=table.seat,
        specs=table.specs,
        names=table.names,
        actions=table.actions,
    )


def write_game_file(path: str | Path, log: dict) -> None:
    """Write ``log`` to ``path`` atomically (OSError passes through)."""
    atomic_write_text(path, json.dumps(log) + "\n")


def write_log(log: dict, path: Path | None, out: TextIO) -> Path | None:
    """Write the log as JSON (atomically; by default into DEFAULT_LOG_DIR, named by the time
    and seed) and say where on ``out``; a failure is reported there, never raised."""
    if path is None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        path = DEFAULT_LOG_DIR / f"{stamp}-seed{log['seed']}.json"
    try:
        write_game_file(path, log)
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
            raise self.fail(
                field,
                f"must be an integer from {allowed.start} to "
                f"{allowed.stop - 1}, got {_short(value)}",
            )
        return value

    def flag(self, field: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, f"must be true or false, got {_short(value)}")
        return value

    def text(self, field: str, value: object, limit: int = MAX_NAME) -> str:
        if not isinstance(value, str) or not 0 < len(value) <= limit:
            raise self.fail(
                field, f"must be a text of 1 to {limit} characters, got {_short(value)}"
            )
        return value

    def array(
        self, field: str, value: object, length: int | None = None, limit: int = MAX_ITEMS
    ) -> list:
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
    expected = {
        "format",
        "written",
        "rules",
        "seed",
        "seat",
        "agents",
        "names",
        "finished",
        "truncated",
        "winners",
        "placings",
        "rounds_won",
        "actions",
        "events",
    }
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
    if log["seat"] is not None:  # None: no person played (evaluate.py's saved games)
        check.integer("seat", log["seat"], seats)
    for field in ("agents", "names"):
        for i, name in enumerate(check.array(field, log[field], n)):
            check.text(f"{field}[{i}]", name)
    finished, truncated = (
        check.flag("finished", log["finished"]),
        check.flag("truncated", log["truncated"]),
    )
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
            raise check.fail(
                f"events[{i}][0] (kind)",
                f"must be one of {', '.join(EVENT_KINDS)}, got {_short(kind)}",
            )
        seat_field, cards, slots = fields[kind]
        check.integer(
            f"events[{i}][1] (player of {kind})", player, seats if seat_field else range(-1, 0)
        )
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


def _read_regular_file(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path``, which must be a regular file: a named pipe nobody
    writes, a terminal or a device would block the read forever or never end. Opened without
    blocking (a FIFO's open waits for a writer otherwise), checked on the open descriptor (no
    race with a rename), then read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file (a pipe, device or folder is never read)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as file:
            fd = -1  # the file object closes it
            return file.read(limit)
    finally:
        if fd >= 0:
            os.close(fd)


def read_log(path: Path) -> dict:
    """Load and check a game log (at most MAX_LOG_BYTES, nested at most MAX_DEPTH deep, every
    value type- and range-checked); ValueError with a readable message if it is not one."""
    shown = printable(str(path))
    try:
        data = _read_regular_file(path, MAX_LOG_BYTES + 1)
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
