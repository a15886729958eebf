"""The table in words, written once: event sentences, the slot marks and the legend, the result
of a game, and the escaping of names for the terminal.

Used by the env renders (:mod:`trash_env.render`), the human seat (:mod:`agents.play.human`), the
terminal game and its replays (:mod:`agents.play`). Every view shows public information only:
face-down cards are marks, never ranks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from trash_env.cards import JACK, JOKER, KING, NUM_RANKS, QUEEN, card_name, card_short
from trash_env.engine import DOWN, NATURAL, WILD_UP, Event

ROW = 5  # slots per layout row (docs/rules.md: two rows of five)
FACE_DOWN = "##"
ABSENT_MARK = "--"  # a slot outside the layout, in every picture of the table


def printable(text: str) -> str:
    """``text`` with every control or other non-printable character escaped as Python writes
    it (``\\x1b``, ``\\n``, ``\\u202e``): names from files, specs and the command line must
    never drive the terminal they are printed on."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def slot_mark(state: int, card: int) -> str:
    """What a slot shows: ``##`` face-down, the rank of a natural card, ``(J)`` a wild card,
    ``--`` outside the layout."""
    if state == DOWN:
        return FACE_DOWN
    if state == NATURAL:
        return card_short(card)
    if state == WILD_UP:
        return f"({card_short(card)})"
    return ABSENT_MARK


def seat_line(name: str, size: int, won: int, face_down: int, acting: bool) -> str:
    """The line above a layout, in the same words in every picture of the table: ``>`` on
    the player to act, the layout's size, the rounds won and the face-down cards."""
    rounds = f"{won} round{'' if won == 1 else 's'} won"
    return f"{'>' if acting else ' '} {name}: layout of {size}, {rounds}, {face_down} face-down"


# The order wild ranks are named in the legend: the face cards, then the joker.
_WILD_ORDER = (JACK, QUEEN, KING, JOKER)


def legend(wild: Sequence[bool] | None = None) -> str:
    """The key to the marks of a table. ``wild`` is the game's wild table
    (``Rules.wild_table()``; standard rules, Jacks, when not given): the legend shows the marks
    of the ranks that are wild, and none when none is."""
    wild_ranks = [r for r in _WILD_ORDER if wild[r]] if wild is not None else [JACK]
    marks = " ".join(f"({card_short(r)})" for r in wild_ranks)
    cards = "wild card" if len(wild_ranks) == 1 else "wild cards"
    wilds = f"{marks} {cards} face-up   " if wild_ranks else ""
    return f"{FACE_DOWN} face-down   {wilds}{ABSENT_MARK} not in the layout   > to act"


# The event kinds whose ``card`` field is a card (a rank), for describe_event.
_CARD_KINDS = frozenset(
    (
        "draw_stock",
        "take_discard",
        "place",
        "wild",
        "swap",
        "pickup",
        "decline",
        "discard",
        "penalty",
        "reveal",
    )
)


def describe_event(event: Event, player_names: Sequence[str] | None = None) -> str:
    """A sentence for an event, with cards named as people name them."""
    who = (
        player_names[event.player]
        if player_names is not None and event.player >= 0
        else f"player {event.player}"
    )
    kind = event.kind
    # Only these kinds carry a card in ``card``: reshuffle holds a count of cards and game_over
    # a count of winners, which must never be looked up as ranks (14+ would not be a card).
    card = card_name(event.card) if kind in _CARD_KINDS and 0 <= event.card < NUM_RANKS else ""
    slot = event.slot + 1
    if kind == "deal":
        return f"deal {event.slot + 1}: {who} plays first"
    if kind == "draw_stock":
        return f"{who} drew {card} from the stock"
    if kind == "take_discard":
        return f"{who} took {card} from the discard pile"
    if kind == "place":
        return f"{who} placed {card} in slot {slot}"
    if kind == "wild":
        return f"{who} laid the wild {card} on slot {slot}"
    if kind == "swap":
        return f"{who} swapped {card} into slot {slot} and took back the wild"
    if kind == "pickup":
        return f"{who} picked up {card} from slot {slot}"
    if kind == "decline":
        return f"{who} declined to swap {card}"
    if kind == "discard":
        return f"{who} discarded {card}"
    if kind == "reshuffle":
        cards = f"{event.card} card{'' if event.card == 1 else 's'}"
        return f"the stock ran out: {cards} shuffled into a new stock"
    if kind == "call":
        return f'{who} called "Trash!"'
    if kind == "penalty":
        return f"{who} forgot to call and drew the penalty card {card}"
    if kind == "claim":
        return f"{who} claims the round"
    if kind == "round_won":
        return f"{who} won the round"
    if kind == "free_draws":
        return f"{who} gets free turns to complete the layout"
    if kind == "reveal":
        return f"{who} turned up {card} in slot {slot}"
    if kind == "shrink":
        return f"{who} now has a layout of {event.slot}"
    if kind == "game_over":
        return "the game is over"
    if kind == "truncated":
        return "the game was cut off at the turn limit"
    return kind


# describe_event speaks of a third person ("X claims the round"); fix the verb after "You".
_SECOND_PERSON = {"plays": "play", "claims": "claim", "gets": "get", "now has": "now have"}
_YOU_VERB = re.compile(r"\bYou (plays|claims|gets|now has)\b")


def describe(event: Event, names: Sequence[str]) -> str:
    """:func:`describe_event` for the terminal: the verb after "You" conjugated, and a capital
    letter where the sentence does not start with a player's name."""
    text = describe_event(event, names)
    text = _YOU_VERB.sub(lambda m: "You " + _SECOND_PERSON[m.group(1)], text)
    if event.player < 0 or event.kind == "deal":
        text = text[:1].upper() + text[1:]
    return text


def result_text(
    truncated: bool,
    winners: Sequence[int],
    placings: Sequence[int] | None,
    rounds_won: Sequence[int],
    names: Sequence[str],
    episode: str = "game",
) -> str:
    """The result in words; ``episode="round"`` speaks of the deal, not the game."""
    if truncated:
        return "The game was cut off at the turn limit (--max-turns): nobody won."
    if not winners:
        return "The game was not finished."
    who = " and ".join(names[p] for p in winners)
    if len(winners) > 1:
        head = f"{who} share the win."
    else:
        noun = "game" if episode == "game" else "deal"
        head = f"{who} won the {noun}" + ("!" if names[winners[0]] == "You" else ".")
    lines = [head, "Rounds won: " + ", ".join(f"{names[p]} {w}" for p, w in enumerate(rounds_won))]
    if placings is not None and len(names) > 2:
        order = sorted(range(len(names)), key=lambda p: placings[p])
        lines.append("Places: " + ", ".join(f"{placings[p]}. {names[p]}" for p in order))
    return "\n".join(lines)
