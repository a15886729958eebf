"""A game log as frames to step through: the table after every logged action.

A log is a file from anywhere, so Watch believes none of its claims, as the terminal's
``--replay`` does and through the same code (:func:`agents.play.replay.rederive`): the log's
actions are played again on the engine from its rules and seed, and the events, frames and
result shown are that game's. Each claim of the log that the replay does not bear out (events,
winners, places, rounds won, whether it finished) is named in the note. The frames show every
card (the page hides the face-down ones unless asked). A log whose actions do not replay (no
seed, an action that is not legal where it stands) is shown as its events alone, with no
result: nothing checks it.
"""

from __future__ import annotations

from agents.play.replay import rederive
from agents.web.state import event_lines, open_state
from trash_env.engine import Event, Game
from trash_env.rules import Rules

MAX_FRAMES = 50_000  # actions of a game the page steps through (a long game has ~2,000)


def _frame(game: Game) -> dict:
    state = open_state(game, [])
    del state["names"], state["legal"], state["seat"]
    pile = state.pop("discard")
    state["discard_top"] = pile[-1] if pile else -1
    state["discard_count"] = len(pile)
    return state


def _frames(log: dict, rules: Rules, replayed: Game) -> list[dict] | None:
    """The table after every action of the game ``rederive`` replayed (its first player drawn,
    or set as in evaluate.py's saved games: whichever gives the same game)."""
    starts = [None, replayed.events[0].player] if replayed.events else [None]
    for first in starts:
        game = Game(rules, seed=log["seed"], first_player=first)
        frames = [_frame(game)]
        try:
            for _, action in log["actions"]:
                game.step(action)
                frames.append(_frame(game))
        except ValueError:
            continue  # not this start: an action is illegal there
        if game.events == replayed.events:
            return frames
    return None


def replay_data(log: dict) -> dict:
    """What the watch page needs of a checked log (agents.play.validate_log has run on it):
    names, rules, and, where its actions replay, the replay's events, frames and result, with
    each claim of the log that disagrees; else the log's events alone and no result."""
    rules = Rules.from_options(**log["rules"])
    names = list(log["names"])
    data = {
        "names": names,
        "seat": log["seat"],
        "agents": list(log["agents"]),
        "rules": rules.to_dict(),
        "written": log["written"],
    }
    try:
        game, disagreements = rederive(log)
    except ValueError as error:
        return data | {
            "finished": None,
            "truncated": None,
            "winners": None,
            "placings": None,
            "rounds_won": None,
            "events": event_lines([Event(*e) for e in log["events"]], names),
            "frames": None,
            "disagreements": [],
            "note": f"{error}: only the log's events are shown, and no result (nothing checks it)",
        }
    frames = _frames(log, rules, game) if len(log["actions"]) < MAX_FRAMES else None
    notes = []
    if disagreements:
        notes.append(
            "the log's own record disagrees with the replay of its actions (shown: the "
            "replay's): " + "; ".join(disagreements)
        )
    if frames is None:
        notes.append(f"the game has more than {MAX_FRAMES} actions: only its events are shown")
    return data | {
        "finished": game.done,
        "truncated": game.truncated,
        "winners": list(game.winners),
        "placings": None if game.placings is None else list(game.placings),
        "rounds_won": list(game.rounds_won),
        "events": event_lines(game.events, names),
        "frames": frames,
        "disagreements": disagreements,
        "note": ". ".join(notes) or None,
    }
