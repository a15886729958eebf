"""The progress of a deal, ``phi``, that the optional shaped reward pays (agents/training/shaping.py
explains the shaping), written once for both training paths: the formula, the coefficient
check, its readers for a reference ``Game`` and :class:`ProgressFollower`, the rule that turns
phi at successive learner decisions into the paid progress. ``agents.training.shaping``'s
wrapper for ``TrashSoloEnv`` follows one game with it, the batched env
(:mod:`trash_env.vector.env`, which may not import agents) a whole batch."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_coef(coef: float) -> float:
    """The shaping coefficient, checked: a finite float from 0 to 10."""
    if isinstance(coef, bool) or not isinstance(coef, (int, float, np.floating, np.integer)):
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    value = float(coef)
    if not 0.0 <= value <= 10.0:  # also refuses NaN
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    return value


def progress_potential(sizes: np.ndarray, down: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """phi per game: the learner's face-up fraction minus the opponents' mean.

    ``sizes`` and ``down`` are ``(B, n)`` (layout sizes, face-down slots left), ``seats`` the
    ``(B,)`` learner seats."""
    sizes = np.asarray(sizes, np.float64)
    up = (sizes - np.asarray(down, np.float64)) / np.maximum(sizes, 1.0)
    n = up.shape[1]
    rows = np.arange(up.shape[0])
    mine = up[rows, seats]
    others = (up.sum(axis=1) - mine) / max(n - 1, 1)
    return mine - others


def game_potential(game: Any, seat: int) -> float:
    """phi of a reference ``Game``'s current deal for the learner at ``seat``."""
    n = game.num_players
    sizes = np.array([game.sizes], np.float64)
    down = np.array([[game.face_down_count(p) for p in range(n)]], np.float64)
    return float(progress_potential(sizes, down, np.array([seat]))[0])


def last_deal_end_potential(game: Any, seat: int) -> float:
    """phi at the end of the game's last finished deal, from the public event log: the
    slots turned face-up in that deal (``place`` and ``wild`` events) and its layout sizes
    (today's, plus one for each ``shrink`` at its end)."""
    n = game.num_players
    events = game.events
    starts = [i for i, e in enumerate(events) if e.kind == "deal"]
    if game.done and not game.truncated:
        begin, end = starts[-1], len(events)
    else:
        begin, end = starts[-2], starts[-1]
    up = np.zeros(n)
    sizes = np.array(game.sizes, np.float64)
    for e in events[begin:end]:
        if e.kind in ("place", "wild"):
            up[e.player] += 1
        elif e.kind == "shrink":
            sizes[e.player] += 1
    return float(progress_potential(sizes[None], (sizes - up)[None], np.array([seat]))[0])


class ProgressFollower:
    """phi followed from each learner decision to the next in ``games`` games, and the
    progress paid for each step (agents/training/shaping.py):

    - within a deal: ``phi(now) - phi(previous decision)``;
    - when a deal ended in between: ``phi(that deal's end) - phi(previous decision)``, plus
      ``phi(now)`` of the new deal unless the episode is over (an unfinished deal at the
      episode's end is taken back: ``phi(now)`` counts as 0).

    ``potential`` holds phi at each game's previous learner decision, ``deals`` the deals
    finished then."""

    def __init__(self, games: int) -> None:
        self.potential = np.zeros(games)
        self.deals = np.zeros(games, np.int64)

    def start(self, index: Any, deals: Any) -> None:
        """New episodes in the games ``index``, ``deals`` deals finished (phi 0)."""
        self.potential[index] = 0.0
        self.deals[index] = deals

    def pick_up(self, phi: Any, deals: Any, fresh: Any) -> None:
        """Where a follower from each episode's start would stand now (turning the shaping
        on mid-episode): phi of the current deal, or 0 before an episode's first step
        (``fresh``)."""
        self.deals = np.array(deals, np.int64)
        self.potential = np.broadcast_to(np.where(fresh, 0.0, phi), self.deals.shape).copy()

    def advance(self, deals: Any, end_phi: Any, now_phi: Any, ended: Any) -> np.ndarray:
        """The progress since the previous learner decision of every game: ``deals`` finished
        now, ``end_phi`` phi at the last finished deal's end (read only where ``deals``
        changed), ``now_phi`` phi now, ``ended`` whether the episode is over."""
        deals = np.array(deals, np.int64)
        new_deal = deals != self.deals
        gained = np.where(new_deal, end_phi - self.potential, 0.0)
        before = np.where(new_deal, 0.0, self.potential)
        now = np.where(ended, 0.0, now_phi)
        self.potential = np.broadcast_to(now, deals.shape).copy()
        self.deals = deals
        return gained + now - before
