"""Pictures of the table: a text view (``ansi``/``human``) and an image (``rgb_array``).

Both show what everybody at a real table sees, plus the face-down marks: every layout as two
rows of five slots (face-down ``##``, natural cards as their rank, wild cards in brackets,
slots outside the layout ``--``), layout sizes, rounds won, the discard top, the stock size, the
card in hand and the last events. Face-down cards are never shown, so a render is safe to show
to a player.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trash_env.cards import NUM_SLOTS, card_short
from trash_env.engine import ABSENT, DOWN, NATURAL, WILD_UP, Decision, Game
from trash_env.text import (  # noqa: F401  (printable: re-exported for its users)
    ROW,
    describe_event,
    legend,
    printable,
    seat_line,
    slot_mark,
)

MAX_EVENTS = 12  # event lines shown

DECISION_TEXT = {
    Decision.DRAW: "draw (stock or discard top)",
    Decision.WILD: "choose a face-down slot for the wild card",
    Decision.SWAP: "swap the card in hand for the wild, or decline",
    Decision.CALL: 'call "Trash!"',
}


def cell(game: Game, player: int, slot: int) -> str:
    """Four characters for one slot (:func:`trash_env.text.slot_mark`): face-down, natural,
    wild or absent."""
    mark = slot_mark(game.state[player][slot], game.layout[player][slot])
    return mark.ljust(4) if mark.startswith("(") else f" {mark:<3}"


def layout_size(game: Game, player: int) -> int:
    """The size of the layout drawn for ``player``. Once the game is over the engine's
    ``sizes`` already hold the next deal's sizes (a winner of the standard game: 0) while the
    table still shows the layouts of the last deal: the picture counts what it shows."""
    if not game.done:
        return game.sizes[player]
    return sum(state != ABSENT for state in game.state[player])


def _cards(count: int) -> str:
    return f"{count} card" if count == 1 else f"{count} cards"


def _names(game: Game, names: Sequence[str] | None) -> list[str]:
    if names is None:
        return [f"player_{p}" for p in range(game.num_players)]
    return [printable(str(name)) for name in names]


def _status(game: Game, names: list[str]) -> str:
    if game.truncated:
        return "game cut off at the turn limit"
    if game.done:
        winners = ", ".join(names[p] for p in game.winners)
        return f"game over: won by {winners}"
    return f"{names[game.current]} to {DECISION_TEXT[game.decision]}"


def render_text(game: Game, names: Sequence[str] | None = None, since: int = 0) -> str:
    """The table as text; ``since`` is the index in ``game.events`` of the first event listed
    (at most the last ``MAX_EVENTS`` of them are shown)."""
    names = _names(game, names)
    acting = -1 if game.done else game.current
    lines = [
        f"deal {game.deal_number + 1 - int(game.done)}, turn {game.turns + 1 - int(game.done)}: "
        + _status(game, names)
    ]
    for p in range(game.num_players):
        lines.append(
            seat_line(
                names[p],
                layout_size(game, p),
                game.rounds_won[p],
                game.face_down_count(p),
                p == acting,
            )
        )
        for start in (0, ROW):
            lines.append("    " + "".join(cell(game, p, s) for s in range(start, start + ROW)))
    top = card_short(game.discard[-1]) if game.discard else "-"
    held = card_short(game.held) if game.held >= 0 else "-"
    lines.append(
        f"discard top {top} ({_cards(len(game.discard))}), stock {_cards(len(game.stock))}, "
        f"in hand {held}"
    )
    events = game.events[since:]
    if events:
        lines.append("last events:")
        if len(events) > MAX_EVENTS:
            lines.append(f"  ... {len(events) - MAX_EVENTS} earlier")
        lines += ["  " + describe_event(e, names) for e in events[-MAX_EVENTS:]]
    lines.append(legend(game.wild))
    return "\n".join(lines)


# ---------------------------------------------------------------------- image

CARD_W, CARD_H, GAP = 34, 48, 6
PANEL_W = ROW * (CARD_W + GAP) + GAP
PANEL_H = 22 + 2 * (CARD_H + GAP) + GAP
COLUMNS = 3
FOOTER_H = 78
FELT = (30, 100, 60)
BACK = (40, 70, 160)
FACE = (245, 245, 240)
WILD = (250, 210, 80)
ABSENT_LINE = (60, 130, 90)
INK = (20, 20, 20)
LIGHT = (235, 235, 235)
ACT = (255, 230, 120)


def image_size(num_players: int) -> tuple[int, int]:
    """(width, height) of the rendered image: fixed per number of players."""
    cols = min(num_players, COLUMNS)
    rows = -(-num_players // COLUMNS)
    return cols * PANEL_W + GAP, rows * PANEL_H + FOOTER_H


def _card(draw, x: int, y: int, fill, label: str = "", outline=INK) -> None:
    draw.rounded_rectangle((x, y, x + CARD_W, y + CARD_H), radius=4, fill=fill, outline=outline)
    if label:
        draw.text((x + CARD_W / 2, y + CARD_H / 2), label, fill=INK, anchor="mm")


def render_image(game: Game, names: Sequence[str] | None = None, since: int = 0) -> np.ndarray:
    """The table as an ``H x W x 3`` uint8 picture (drawn with Pillow)."""
    from PIL import Image, ImageDraw

    names = _names(game, names)
    width, height = image_size(game.num_players)
    img = Image.new("RGB", (width, height), FELT)
    draw = ImageDraw.Draw(img)
    acting = -1 if game.done else game.current
    for p in range(game.num_players):
        x0 = GAP + (p % COLUMNS) * PANEL_W
        y0 = (p // COLUMNS) * PANEL_H + 4
        head = f"{names[p]}  size {layout_size(game, p)}  won {game.rounds_won[p]}"
        draw.text(
            (x0, y0), ("> " if p == acting else "") + head, fill=ACT if p == acting else LIGHT
        )
        for s in range(NUM_SLOTS):
            x = x0 + (s % ROW) * (CARD_W + GAP)
            y = y0 + 18 + (s // ROW) * (CARD_H + GAP)
            state = game.state[p][s]
            if state == DOWN:
                _card(draw, x, y, BACK, outline=LIGHT)
            elif state == NATURAL:
                _card(draw, x, y, FACE, card_short(game.layout[p][s]))
            elif state == WILD_UP:
                _card(draw, x, y, WILD, card_short(game.layout[p][s]))
            else:
                _card(draw, x, y, None, outline=ABSENT_LINE)
    fy = height - FOOTER_H + 8
    footer = [
        ("discard", FACE if game.discard else None, game.discard[-1] if game.discard else -1),
        ("stock", BACK if game.stock else None, -1),
        (
            "in hand",
            (WILD if game.wild[game.held] else FACE) if game.held >= 0 else None,
            game.held,
        ),
    ]
    for i, (label, fill, card) in enumerate(footer):
        x = GAP + i * (CARD_W + 2 * GAP)
        _card(draw, x, fy, fill, card_short(card) if card >= 0 else "", outline=LIGHT)
        draw.text((x + CARD_W / 2, fy + CARD_H + 3), label, fill=LIGHT, anchor="mt")
    tx = 3 * (CARD_W + 2 * GAP) + GAP
    draw.text((tx, fy), f"discard {len(game.discard)}  stock {len(game.stock)}", fill=LIGHT)
    draw.text((tx, fy + 16), _status(game, names), fill=LIGHT)
    events = game.events[since:]
    if events:
        draw.text((tx, fy + 32), describe_event(events[-1], names), fill=LIGHT)
    return np.asarray(img, dtype=np.uint8)
