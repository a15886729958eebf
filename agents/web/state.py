"""What the page is sent about a table: one seat's public picture of a game, or every card.

:func:`public_state` reads the game only through :class:`trash_env.view.PublicView` and the
public record (events, results), so what it returns is the same whatever the hidden cards are;
tests/test_web_leaks.py re-deals them and compares. :func:`open_state` shows every card, for
the replay of a game that is over.
"""

from __future__ import annotations

from trash_env.cards import NUM_SLOTS
from trash_env.engine import DOWN, Decision, Event, Game
from trash_env.text import describe
from trash_env.view import PublicView

DECISIONS = {int(d): d.name.lower() for d in Decision}  # the page gets the list (/api/options)


def event_lines(events: list[Event], names: list[str]) -> list[list]:
    """Each event as ``[kind, player, card, slot, sentence]`` (the sentence of trash_env.text)."""
    return [[e.kind, e.player, e.card, e.slot, describe(e, names)] for e in events]


def _table(view: PublicView, game: Game, names: list[str]) -> dict:
    n = view.num_players
    return {
        "players": n,
        "names": names,
        "current": view.current,
        "decision": DECISIONS[int(view.decision)],
        "held": view.held,
        "discard": view.discard,
        "stock": view.stock_size,
        "wild": [int(w) for w in view.wild],
        "layouts": [
            {
                "size": view.sizes[p],
                "states": view.slot_states(p),
                "cards": view.face_up(p),
                "face_down": view.face_down_count(p),
                "rounds_won": view.rounds_won[p],
            }
            for p in range(n)
        ],
        "deal": game.deal_number + (0 if game.done else 1),
        "turns": game.turns,
        "done": game.done,
        "truncated": game.truncated,
        "winners": list(game.winners),
        "placings": list(game.placings) if game.placings is not None else None,
        "event_count": len(game.events),
    }


def public_state(game: Game, seat: int, names: list[str], since: int = 0) -> dict:
    """Seat ``seat``'s picture of ``game``: layouts (face-down cards as marks), discard pile,
    stock count, the card in hand, whose turn, the seat's legal actions (empty when another
    seat is to act) and the events from index ``since`` on."""
    view = PublicView(game, seat)
    state = _table(view, game, names)
    state["seat"] = seat
    state["legal"] = view.legal_actions() if view.current == seat and not view.done else []
    since = min(max(since, 0), len(game.events))
    state["events"] = event_lines(game.events[since:], names)
    state["events_from"] = since
    return state


def open_state(game: Game, names: list[str]) -> dict:
    """Every card of ``game`` shown (face-down cards too): for a game that is over."""
    state = _table(PublicView(game, -1), game, names)
    for p, layout in enumerate(state["layouts"]):
        layout["cards"] = [
            game.layout[p][s] if game.state[p][s] == DOWN else layout["cards"][s]
            for s in range(NUM_SLOTS)
        ]
    state["seat"] = -1
    state["legal"] = []
    return state
