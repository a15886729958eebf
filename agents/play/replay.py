"""A game in words and pictures from its events alone (public information): the layouts of a
deal rebuilt from its events (:class:`DealTracker`), the event lines of the terminal game
(:func:`narrate`), and the replay of a game log deal by deal (:func:`replay`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from agents.play.human import CELL, cell
from trash_env.cards import NUM_SLOTS, card_short
from trash_env.engine import ABSENT, DOWN, NATURAL, WILD_UP, Event
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


def replay(log: dict, out: TextIO, pause: bool = False, stdin: TextIO | None = None) -> None:
    """Print a logged game's events deal by deal; ``pause`` waits for Enter between deals."""
    names = [printable(name) for name in log["names"]]  # never raw to the terminal
    rules = Rules.from_options(**log["rules"])
    changed = [f"{k}={v}" for k, v in rules.to_dict().items() if getattr(Rules(), k) != v]
    out.write(
        f"Game of {printable(log['written'])}, seed {log['seed']}: " + ", ".join(names) + "\n"
    )
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
        last = number == len(deals)
        title = None
        if last:
            title = (
                "The table at the end of the game:"
                if log["finished"]
                else "The table when the game was left:"
            )
        out.write("\n".join(tracker.picture(names, title, next_deal=not last)) + "\n")
    out.write("\n")
    if not log["finished"]:
        out.write("The game was left before its end.\n")
    else:
        out.write(
            result_text(
                log["truncated"],
                log["winners"],
                log["placings"],
                log["rounds_won"],
                names,
                rules.episode,
            )
            + "\n"
        )
