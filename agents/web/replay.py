"""A game log as frames to step through: the table after every logged action.

A log holds the rules, the seed and every action (agents.play's schema), so the game is played
again on the engine and checked against the logged events; the frames then show every card
(the page hides the face-down ones unless asked). A log whose actions do not reproduce its
events (another engine version, a hand-edited file) is shown as its events alone.
"""

from __future__ import annotations

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


def _replayed(log: dict, rules: Rules, first_player: int | None) -> list[dict] | None:
    """The frames of the log's game played again, or None where it does not match the log."""
    try:
        game = Game(rules, seed=log["seed"], first_player=first_player)
    except ValueError:
        return None
    logged = [tuple(e) for e in log["events"]]
    if [tuple(e) for e in game.events] != logged[: len(game.events)]:
        return None
    frames = [_frame(game)]
    for player, action in log["actions"]:
        if game.done or game.current != player or action not in game.legal_actions():
            return None
        before = len(game.events)
        game.step(action)
        if [tuple(e) for e in game.events[before:]] != logged[before : len(game.events)]:
            return None
        frames.append(_frame(game))
    if len(game.events) != len(logged):
        return None
    return frames


def replay_data(log: dict) -> dict:
    """What the watch page needs of a checked log (agents.play.validate_log has run on it):
    names, rules, events in words and, if the actions reproduce the events, the frames."""
    rules = Rules.from_options(**log["rules"])
    names = list(log["names"])
    events = [Event(*e) for e in log["events"]]
    frames = None
    note = None
    if len(log["actions"]) >= MAX_FRAMES:
        note = f"the game has more than {MAX_FRAMES} actions: only its events are shown"
    elif log["seed"] is None:
        note = "the log has no seed: only its events are shown"
    else:
        frames = _replayed(log, rules, None)
        if frames is None and events:  # a tournament game: its first seat was set, not drawn
            frames = _replayed(log, rules, events[0].player)
        if frames is None:
            note = "the log's actions do not reproduce its events: only its events are shown"
    return {
        "names": names,
        "seat": log["seat"],
        "agents": list(log["agents"]),
        "rules": rules.to_dict(),
        "written": log["written"],
        "finished": log["finished"],
        "truncated": log["truncated"],
        "winners": list(log["winners"]),
        "placings": log["placings"],
        "rounds_won": list(log["rounds_won"]),
        "events": event_lines(events, names),
        "frames": frames,
        "note": note,
    }
