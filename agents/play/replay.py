"""A game in words and pictures from its events alone (public information): the layouts of a
deal rebuilt from its events (:class:`DealTracker`), the event lines of the terminal game
(:func:`narrate`), and the replay of a game log deal by deal (:func:`replay`).

A log is a file from anywhere, so a replay believes none of its claims: :func:`rederive` plays
the logged actions again on the engine from the log's rules and seed, and everything shown
(events, tables, result) is that game's. Where the log's own record (events, winners, rounds
won, places, whether it finished) says otherwise, the replay says so; a log whose actions do
not replay (an action that is not legal where it stands) is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NamedTuple, TextIO

from agents.play.human import CELL, cell
from trash_env.cards import NUM_SLOTS, card_short
from trash_env.engine import ABSENT, ACTION_NAMES, DOWN, NATURAL, WILD_UP, Event, Game
from trash_env.rules import Rules
from trash_env.text import ROW, describe, printable, result_text


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
        self.dealt = [0] * n  # the layout size of the current deal
        self.deals = 0  # deals started

    def feed(self, event: Event) -> None:
        kind, p, card, slot = event
        if kind == "deal":
            self.deals += 1
            self.dealt = list(self.sizes)
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

    def picture(
        self, names: Sequence[str], title: str | None = None, next_deal: bool = True
    ) -> list[str]:
        """Every layout as it lies (cards turned up shown as [5]). ``next_deal``: the picture
        of a finished deal before the next one, which names each next layout's size; else (the
        game's end, or a game left mid-deal) the size of the layout on the table."""
        lines = [title or f"The table at the end of deal {self.deals}:"]
        for p, name in enumerate(names):
            won = self.rounds_won[p]
            size = f"next layout of {self.sizes[p]}" if next_deal else f"layout of {self.dealt[p]}"
            lines.append(f"{name}: {won} round{'' if won == 1 else 's'} won, {size}")
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


# Decisions in one turn at most: a draw, a wild target per face-down slot, a swap per wild
# picked up plus a declined one, and a call (the bound OpenSpiel's max_game_length uses too).
MAX_DECISIONS_PER_TURN = 1 + NUM_SLOTS + NUM_SLOTS + 1 + 1


def max_actions(rules: Rules) -> int:
    """A bound on the actions of a game under ``rules``: the engine cuts every game off after
    ``max_turns`` turns, each of at most MAX_DECISIONS_PER_TURN decisions; a margin of one
    turn per card first dealt makes it the bound OpenSpiel's ``max_game_length`` is."""
    return MAX_DECISIONS_PER_TURN * (rules.max_turns + rules.num_players * rules.start_size)


class Replayed(NamedTuple):
    """A log's game played again: the engine's game, and each claim of the log it disagrees
    with, as a sentence (empty when the log is true to its actions)."""

    game: Game
    disagreements: list[str]


def _play(log: dict, rules: Rules, first_player: int | None) -> Game:
    """The log's actions stepped on a fresh engine, or ValueError (one sentence) at the first
    that is not legal where it stands."""
    game = Game(rules, seed=log["seed"], first_player=first_player)
    actions = log["actions"]
    for i, (player, action) in enumerate(actions, 1):
        where = f"action {i} of {len(actions)} ({ACTION_NAMES[action]} by seat {player + 1})"
        if game.done:
            raise ValueError(f"{where} comes after the end of the game")
        if player != game.current:
            raise ValueError(f"{where} is out of turn: seat {game.current + 1} is to play")
        legal = game.legal_actions()
        if action not in legal:
            allowed = ", ".join(ACTION_NAMES[a] for a in legal)
            raise ValueError(f"{where} is not legal there (legal: {allowed})")
        game.step(action)
    return game


def _first_difference(logged: list, replayed: list[Event], names: Sequence[str]) -> str | None:
    for i, (a, b) in enumerate(zip(logged, replayed, strict=False)):
        if tuple(a) != tuple(b):
            said, done = describe(Event(*a), names), describe(b, names)
            return f'event {i + 1}: the log says "{said}"; the replay "{done}"'
    if len(logged) != len(replayed):
        return f"the log holds {len(logged)} events; the replay {len(replayed)}"
    return None


def _disagreements(log: dict, game: Game, names: Sequence[str]) -> list[str]:
    """Each claim of the log that the replayed ``game`` does not bear out, in words."""

    def who(players: Sequence[int]) -> str:
        return " and ".join(names[p] for p in players) if players else "nobody"

    def table(values: Sequence[int]) -> str:
        return ", ".join(f"{names[p]} {v}" for p, v in enumerate(values))

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    found = []
    events = _first_difference(log["events"], game.events, names)
    if events is not None:
        found.append(f"events: {events}")
    if log["finished"] != game.done:
        found.append(f"finished: the log says {yes(log['finished'])}; the replay {yes(game.done)}")
    if log["truncated"] != game.truncated:
        found.append(
            f"cut off at the turn limit: the log says {yes(log['truncated'])}; "
            f"the replay {yes(game.truncated)}"
        )
    if list(log["winners"]) != list(game.winners):
        found.append(f"winners: the log says {who(log['winners'])}; the replay {who(game.winners)}")
    placings = None if game.placings is None else list(game.placings)
    if log["placings"] != placings:
        said = "none" if log["placings"] is None else table(log["placings"])
        done = "none" if placings is None else table(placings)
        found.append(f"places: the log says {said}; the replay {done}")
    if list(log["rounds_won"]) != list(game.rounds_won):
        found.append(
            f"rounds won: the log says {table(log['rounds_won'])}; "
            f"the replay {table(game.rounds_won)}"
        )
    return found


def rederive(log: dict) -> Replayed:
    """Play a checked log's actions (:func:`agents.play.game_log.validate_log`) again from its
    rules and seed. ValueError, one sentence, for a log that cannot be replayed: no seed, more
    actions than a game of its rules can take (:func:`max_actions`), or an action that is not
    legal where it stands (other rules, another seed, an edited action).

    evaluate.py's saved games set each game's first seat instead of drawing it, so a log that
    does not replay as drawn is tried with its first deal's first player set."""
    names = [printable(name) for name in log["names"]]
    rules = Rules.from_options(**log["rules"])
    if log["seed"] is None:
        raise ValueError("the log has no seed, so its deals cannot be dealt again")
    bound = max_actions(rules)
    if len(log["actions"]) > bound:
        raise ValueError(
            f"the log holds {len(log['actions'])} actions, more than the {bound} a game under "
            f"its rules can take (max_turns={rules.max_turns})"
        )
    starts: list[int | None] = [None]
    if log["events"]:
        starts.append(log["events"][0][1])
    refusals: list[ValueError] = []
    kept = None
    for first in starts:
        try:
            game = _play(log, rules, first)
        except ValueError as error:
            refusals.append(error)
            continue
        found = _disagreements(log, game, names)
        if not found:
            return Replayed(game, [])
        kept = kept or Replayed(game, found)
    if kept is not None:
        return kept
    raise ValueError(f"its actions do not replay under its rules and seed: {refusals[0]}")


def write_deals(
    events: Sequence[Event],
    names: Sequence[str],
    rules: Rules,
    out: TextIO,
    *,
    finished: bool,
    pause: bool = False,
    stdin: TextIO | None = None,
) -> bool:
    """Print ``events`` deal by deal, each deal's table after it; ``pause`` waits for Enter
    between deals. False when the reader stopped (q or end of input)."""
    deals: list[list[Event]] = []
    for event in events:
        if event.kind == "deal" or not deals:
            deals.append([])
        deals[-1].append(event)
    tracker = DealTracker(rules)
    for number, dealt in enumerate(deals, 1):
        if pause and number > 1:
            out.write("Press Enter for the next deal (q to stop): ")
            out.flush()
            line = (stdin or sys.stdin).readline()
            if not line or line.strip().lower() in ("q", "quit"):
                out.write("\n")
                return False
        out.write(f"\n=== Deal {number} ===\n")
        for event in dealt:
            tracker.feed(event)
            out.write("  " + describe(event, names) + "\n")
        last = number == len(deals)
        title = None
        if last:
            title = (
                "The table at the end of the game:"
                if finished
                else "The table when the game was left:"
            )
        out.write("\n".join(tracker.picture(names, title, next_deal=not last)) + "\n")
    return True


def replay(log: dict, out: TextIO, pause: bool = False, stdin: TextIO | None = None) -> None:
    """Print a checked log's game deal by deal as its actions replay on the engine
    (:func:`rederive`: ValueError if they do not), and say where the log's own record
    disagrees; ``pause`` waits for Enter between deals."""
    game, disagreements = rederive(log)
    names = [printable(name) for name in log["names"]]  # never raw to the terminal
    rules = game.rules
    changed = [f"{k}={v}" for k, v in rules.to_dict().items() if getattr(Rules(), k) != v]
    out.write(
        f"Game of {printable(log['written'])}, seed {log['seed']}: " + ", ".join(names) + "\n"
    )
    out.write("Rules: " + (", ".join(changed) if changed else "standard") + "\n")
    out.write(
        f"Replayed on the engine: {len(log['actions'])} actions from the log's rules and seed.\n"
    )
    warning = _warning(disagreements)
    out.write(warning)
    if not write_deals(
        game.events, names, rules, out, finished=game.done, pause=pause, stdin=stdin
    ):
        return
    out.write("\n")
    if not game.done:
        out.write("The game was left before its end.\n")
    else:
        out.write(
            result_text(
                game.truncated, game.winners, game.placings, game.rounds_won, names, rules.episode
            )
            + "\n"
        )
    out.write(warning)


def _warning(disagreements: Sequence[str]) -> str:
    """The lines that say where the log's record disagrees with its replay (none if nowhere)."""
    if not disagreements:
        return ""
    lines = [
        "WARNING: the log's own record disagrees with the replay of its actions; "
        "what is shown here is the replay."
    ]
    lines += [f"  - {line}" for line in disagreements]
    return "\n".join(lines) + "\n"
