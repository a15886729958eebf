"""A person at the table: the table drawn as text and the choices asked for by short keys.

:class:`HumanAgent` is an :class:`agents.bots.base.Agent` like the bots, so a person can take a seat
wherever a bot can (spec ``"human"``). It sees what the bots see, a
:class:`trash_env.view.PublicView`, and draws the table from it alone: face-down cards are
never shown, not even the player's own. ``python -m agents.play`` builds the terminal game
on it; there the human also answers the "Trash!" call, which the env answers for every agent.

Keys: ``s`` draw from the stock, ``d`` take the discard top, ``1``..``10`` a slot, ``n``
decline a swap, ``trash`` call "Trash!"; at any question ``h`` shows help, ``t`` draws the
table again and ``q`` leaves (:class:`HumanQuit`, which ends a script quietly). End of input
raises ``EOFError``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from agents.bots.base import MODEL_SUFFIX, Agent, parse_spec, register_agent
from trash_env.cards import NUM_SLOTS, card_name
from trash_env.engine import (
    CALL_TRASH,
    DECLINE,
    DRAW_STOCK,
    STAY_SILENT,
    TAKE_DISCARD,
    Decision,
)
from trash_env.text import (  # noqa: F401  (describe: re-exported for its users)
    ROW,
    describe,
    legend,
    printable,
    seat_line,
    slot_mark,
)
from trash_env.view import PublicView

CELL = 5  # characters per slot on screen
HELP = """\
Keys: s = draw from the stock, d = take the discard top, 1-10 = a slot,
      n = decline a swap, trash = call "Trash!" (only with --call-trash),
      t = show the table again, h = this help, q = leave the game.
A number card goes to its own slot; a wild card to a face-down slot of your choice.
Your turn ends when the card in hand cannot be placed; it goes on the discard pile."""


class HumanQuit(SystemExit):
    """The person asked to leave the game (typed ``q``). A ``SystemExit`` (code 0): a script
    that seats a human and does not catch it ends quietly, as the person asked, never with a
    traceback; ``python -m agents.play`` catches it to say goodbye and save the game."""

    def __init__(self) -> None:
        super().__init__(0)


def seat_seeds(seed: int, num_players: int) -> list[int]:
    """One independent seed per seat, derived from the game's seed (the terminal and the web
    table deal the same bots the same seeds)."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(num_players)]


def bot_label(spec: str) -> str:
    """A bot's name for the table: a model file by its stem, every name made printable."""
    name = parse_spec(spec)[0]
    return printable(Path(name).stem if name.lower().endswith(MODEL_SUFFIX) else name)


def seat_names(num_players: int, seat: int, labels: Sequence[str] | None = None) -> list[str]:
    """Names for the screen: ``"You"`` at ``seat``, ``"<label> (seat k)"`` elsewhere (seats
    counted from 1, as people count them). Control characters in labels are escaped."""
    names = []
    for p in range(num_players):
        if p == seat:
            names.append("You")
        else:
            label = printable(labels[p]) if labels is not None else "player"
            names.append(f"{label} (seat {p + 1})")
    return names


def cell(state: int, card: int) -> str:
    """One slot, centred in CELL characters (:func:`trash_env.text.slot_mark`)."""
    return slot_mark(state, card).center(CELL)


def draw_layout(view: PublicView, player: int) -> list[str]:
    """Two rows of five slots, each under its slot number."""
    states, cards = view.slot_states(player), view.face_up(player)
    lines = []
    for start in (0, ROW):
        slots = range(start, start + ROW)
        lines.append("   " + "".join(str(s + 1).center(CELL) for s in slots))
        lines.append("   " + "".join(cell(states[s], cards[s]) for s in slots))
    return lines


def draw_table(view: PublicView, names: Sequence[str], deal: int | None = None) -> str:
    """The whole table as the seat of ``view`` may see it: public information only."""
    lines = []
    acting = -1 if view.done else view.current
    for p in range(view.num_players):
        lines.append(
            seat_line(
                names[p], view.sizes[p], view.rounds_won[p], view.face_down_count(p), p == acting
            )
        )
        lines += draw_layout(view, p)
    discard = view.discard
    count = f"{len(discard)} card{'' if len(discard) == 1 else 's'}"
    top = f"{card_name(discard[-1])} on top ({count})" if discard else "empty"
    head = f"Deal {deal}: " if deal is not None else ""
    lines.append(f"{head}stock {view.stock_size} cards, discard pile {top}")
    if view.held >= 0 and not view.done:
        wild = " (wild)" if view.wild[view.held] else ""
        lines.append(f"In hand: {card_name(view.held)}{wild}")
    lines.append(legend(view.wild))
    return "\n".join(lines)


def _slot_list(slots: Iterable[int]) -> str:
    return ", ".join(str(s + 1) for s in slots)


def choices_text(view: PublicView) -> tuple[str, str]:
    """The legal choices in words, and the short prompt that asks for one."""
    decision, legal = view.decision, view.legal_actions()
    if decision == Decision.DRAW:
        top = card_name(view.discard[-1])
        return (
            f"Draw a card:  s = the top of the stock ({view.stock_size} cards)   "
            f"d = the {top} from the discard pile",
            "Your choice [s/d]: ",
        )
    held = card_name(view.held)
    if decision == Decision.WILD:
        return (
            f"You hold the wild {held}. Lay it on one of your face-down slots: "
            f"{_slot_list(legal)} (type the slot number).",
            f"Slot for the {held} [{'/'.join(str(a + 1) for a in legal)}]: ",
        )
    if decision == Decision.SWAP:
        slot = view.held
        wild = card_name(view.face_up(view.seat)[slot - 1])
        return (
            f"You hold the {held}; slot {slot} holds the wild {wild}.  "
            f"{slot} = lay the {held} there and play on with the {wild}   "
            f"n = decline, discard the {held} and end your turn",
            f"Your choice [{slot}/n]: ",
        )
    if decision == Decision.CALL:
        return (
            f"You are about to fill your last face-down slot with the {held}.",
            'Type trash to call "Trash!", or press Enter to place it without calling: ',
        )
    return ("The game is over.", "")


def parse_choice(text: str, view: PublicView) -> int | str:
    """The action a typed answer names, or a message saying why it is not a legal choice.

    Answers to the call question are ``CALL_TRASH``/``STAY_SILENT`` (engine-only actions);
    ``"h"``, ``"t"`` and ``"q"`` come back as the strings ``"help"``, ``"table"`` and
    ``"quit"``. Any other string is an error message for the person."""
    key = text.strip().lower()
    decision, legal = view.decision, view.legal_actions()
    if key in ("q", "quit", "exit"):
        return "quit"
    if key in ("h", "help", "?"):
        return "help"
    if key in ("t", "table"):
        return "table"
    if decision == Decision.CALL:
        if key in ("trash", "trash!", '"trash!"'):
            return CALL_TRASH
        if key == "":
            return STAY_SILENT
        return f"{text.strip()!r} is not a call: type trash (or press Enter not to call)."
    if key == "":
        return "Please type one of the keys shown."
    if decision == Decision.DRAW:
        if key in ("s", "stock"):
            return DRAW_STOCK
        if key in ("d", "discard"):
            return TAKE_DISCARD if TAKE_DISCARD in legal else "The discard pile is empty: type s."
        return f"{text.strip()!r}: now you draw; type s (stock) or d (discard pile)."
    if key == "trash":
        return "You can call Trash! only when you are about to fill your last slot."
    if decision == Decision.SWAP and key in ("n", "no", "decline"):
        return DECLINE
    if not key.isdigit():
        keys = "a slot number" + (" or n" if decision == Decision.SWAP else "")
        return f"{text.strip()!r} is not a choice here: type {keys}."
    slot = int(key)
    size = view.sizes[view.seat]
    if not 1 <= slot <= NUM_SLOTS:
        return f"There is no slot {slot}: slots are numbered 1 to {size}."
    if slot > size:
        return f"Slot {slot} is not in your layout of {size}."
    if slot - 1 in legal:
        return slot - 1
    if decision == Decision.SWAP:
        return f"The {card_name(view.held)} can only go to slot {view.held}: type {view.held} or n."
    card = card_name(view.face_up(view.seat)[slot - 1])
    return f"Slot {slot} is already face-up ({card}); choose a face-down slot: {_slot_list(legal)}."


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class HumanAgent(Agent):
    """A seat played by a person through text streams (the terminal by default).

    Args:
        seed: unused (a person brings their own randomness); kept for ``make_agent``.
        stdin: the stream to read answers from (``sys.stdin`` by default).
        stdout: the stream to write to (``sys.stdout`` by default).
        names: player names for the screen (default: "You" and "player (seat k)").
    """

    name = "human"
    uses_observation = False

    def __init__(
        self,
        seed: int | None = None,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        names: Sequence[str] | None = None,
    ) -> None:
        super().__init__(seed)
        self.stdin = stdin
        self.stdout = stdout
        self.names = [printable(n) for n in names] if names is not None else None
        self.deal: int | None = None  # shown in the table header when set
        self._notes: list[str] = []

    # -------------------------------------------------------------- output

    def say(self, text: str = "") -> None:
        out = self.stdout if self.stdout is not None else sys.stdout
        out.write(text + "\n")
        out.flush()

    def tell(self, lines: Iterable[str]) -> None:
        """Queue lines (what happened since the last question) to show before the next one."""
        self._notes.extend(lines)

    def _names(self, view: PublicView) -> list[str]:
        return self.names if self.names is not None else seat_names(view.num_players, view.seat)

    def show(self, view: PublicView) -> None:
        """Print the queued lines and the table."""
        if self._notes:
            self.say("")
            for line in self._notes:
                self.say("  " + line)
            self._notes.clear()
        self.say("")
        self.say(draw_table(view, self._names(view), self.deal))

    # -------------------------------------------------------------- input

    def _read(self, prompt: str) -> str:
        """One line; ``EOFError`` at end of input (``input()`` on a terminal, for line editing)."""
        stdin = self.stdin if self.stdin is not None else sys.stdin
        out = self.stdout if self.stdout is not None else sys.stdout
        if stdin is sys.stdin and out is sys.stdout and _isatty(stdin):
            return input(prompt)
        out.write(prompt)
        out.flush()
        line = stdin.readline()
        if not line:
            raise EOFError
        if not _isatty(stdin):  # a script or a pipe: echo the answer so transcripts read well
            out.write(printable(line.rstrip("\r\n")) + "\n")
        return line

    def ask(self, view: PublicView) -> int:
        """Show the table and ask until the answer is a legal choice; returns the engine action
        (including ``CALL_TRASH``/``STAY_SILENT`` at a call decision)."""
        self.show(view)
        text, prompt = choices_text(view)
        self.say(text)
        while True:
            answer = parse_choice(self._read(prompt), view)
            if answer == "quit":
                raise HumanQuit
            if answer == "help":
                self.say(HELP)
            elif answer == "table":
                self.say(draw_table(view, self._names(view), self.deal))
                self.say(text)
            elif isinstance(answer, str):
                self.say(answer)
            else:
                return answer

    def act(self, observation: object, action_mask: np.ndarray, view: PublicView) -> int:
        action = self.ask(view)
        if not action_mask[action]:  # cannot happen: ask() returns legal actions only
            raise AssertionError(f"human chose {action}, not in the action mask")
        return action


register_agent("human", HumanAgent)
