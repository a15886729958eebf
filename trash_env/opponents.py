"""The opponent pool of a learner-seat env, written once: :class:`trash_env.solo.TrashSoloEnv`
and the batched envs (:mod:`trash_env.vector.env`) take the same ``opponents`` argument and
seat each episode's table with the same draw.

- Entries: spec strings (:func:`trash_env.agent.make_agent`) and/or ready
  :class:`trash_env.agent.Agent` objects (the batched env also plays stable-baselines3
  policies); a spec string alone stands for a pool of one. ``specs`` names them for display
  and checkpoints.
- The draw (:meth:`OpponentPool.draw`): per table, the learner's seat (unless fixed), then one
  entry per opponent seat in seat order, uniformly (repeat an entry to weight it), all from the
  env's generator. The batched env draws an entry for the learner's seat too and drops it
  (``every_seat``): each env keeps the stream its seeded runs and checkpoints were made with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trash_env.agent import Agent, make_agent

OpponentEntry = Any  # a spec string, an Agent, or (batched env) a stable-baselines3 policy
LEARNER = -1  # the learner's seat in a drawn table


def build(entry: OpponentEntry) -> Any:
    """The agent of one pool entry: a spec is built with seed 0 (each episode reseeds the
    agents from the env's generator, and building must not draw from it: the deals would
    depend on it); objects are used as given."""
    return make_agent(entry, seed=0) if isinstance(entry, str) else entry


class OpponentPool:
    """The entries of an ``opponents`` argument, checked.

    Args:
        opponents: a spec string, or a non-empty sequence of specs and agents.
        policies: whether objects with ``predict`` (stable-baselines3 policies) are entries
            too (the batched env plays them).
    """

    def __init__(self, opponents: Sequence[OpponentEntry] | str, *, policies: bool = False) -> None:
        entries = [opponents] if isinstance(opponents, str) else list(opponents)
        if not entries:
            raise ValueError("opponents must name at least one opponent (a spec or an Agent)")
        for entry in entries:
            if not (isinstance(entry, (str, Agent)) or (policies and hasattr(entry, "predict"))):
                allowed = "agent spec strings or Agent objects"
                if policies:
                    allowed = "agent spec strings, Agent objects or stable-baselines3 policies"
                raise ValueError(f"opponents entries must be {allowed}, got {entry!r}")
        self.entries = entries
        self.specs = [e if isinstance(e, str) else repr(e) for e in entries]

    def __len__(self) -> int:
        return len(self.entries)

    def draw(
        self,
        rng: np.random.Generator,
        tables: int,
        num_players: int,
        seat: int | None,
        *,
        every_seat: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Seat ``tables`` episodes: the learner's seats (``seat``, or drawn) and int64
        ``(tables, num_players)`` pool indices, :data:`LEARNER` at the learner's seat. Draws
        the seats, then each table's opponents in seat order (what one table drawing its seat
        and then one entry per opponent seat draws: the solo env is the batch of one); with
        ``every_seat`` the learner's seat draws an entry too, which is dropped."""
        n = num_players
        if seat is None:
            seats = rng.integers(n, size=tables)
        else:
            seats = np.full(tables, seat, np.int64)
        rows = np.arange(tables)
        if every_seat:
            table = rng.integers(len(self.entries), size=(tables, n))
            table[rows, seats] = LEARNER
            return seats, table
        drawn = rng.integers(len(self.entries), size=(tables, n - 1))
        others = np.arange(n - 1)[None, :]
        others = others + (others >= seats[:, None])  # the seats around the learner's
        table = np.full((tables, n), LEARNER, np.int64)
        table[rows[:, None], others] = drawn
        return seats, table
