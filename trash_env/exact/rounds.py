"""A round enumerated and solved in compiled code, layout pair by layout pair.

:func:`enumerate_states` finds every decision state reachable from the deal (either seat to
draw first) breadth first, in numba (:mod:`trash_env.exact.compiled`), and returns their keys
sorted. Sorted keys group the states by *layout pair* (both layouts' marks), and a move only
ever leads to the same layout pair or a later one: a mark only rises. :func:`solve_states`
then solves the layout pairs from the last to the first. Each holds only its own states' edges
(its cycles: passes, reshuffles) and reads the final values of the pairs it leads to, so
memory is the states' keys and values plus one layout pair's edges, never the whole graph.

Where passing can go on for ever the Bellman equations may have several solutions, and the
env's return is the limit of the round cut off after ever more decisions (docs/skill.md,
"Passing and the objective"). The solve finds it in three steps: the least and the greatest
solution, pair by pair (sweeps from -1 and from 1); where they meet, that is the value;
the states where they do not, and every state those reach, swept whole from 0 (the cut-off
recursion) to its limit; then, pair by pair again, the optimal moves and the matchups.

Besides the optimal values it evaluates fixed policy pairs on the same pass (exact, no
sampling) and greedy's loss against optimal play; :mod:`trash_env.exact.analysis` reports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trash_env.exact import compiled
from trash_env.exact.graph import key_bases
from trash_env.exact.model import Model

TOLERANCE = 1e-14  # the largest change of the last sweep in a layout pair
POLICY_CODES = {
    "optimal": compiled.OPTIMAL,
    "greedy": compiled.GREEDY,
    "random": compiled.RANDOM,
    "counting": compiled.COUNTING,
}
_MARGIN = 1 << 14  # room for the states one expansion can add


@dataclass(frozen=True)
class Packing:
    """The compiled form of a round's rules: its sizes, card classes and key radices."""

    a: int
    b: int
    classes: int
    totals: np.ndarray  # int64 per class
    bases: np.ndarray  # uint64 per key digit
    low: np.uint64  # the radix of everything below the marks: key // low is the layout pair

    @classmethod
    def of(cls, model: Model, pile_top: bool = False) -> Packing:
        """``pile_top``: keys keep the card under the discard top (the pile's top mid-turn),
        which ``counting``'s wild choice reads (more states; values unchanged)."""
        bases = key_bases(model, pile_top)
        low = 1
        for base in bases[sum(model.sizes) :]:
            low *= base
        return cls(
            model.sizes[0],
            model.sizes[1],
            model.classes.count,
            np.array(model.totals, dtype=np.int64),
            np.array(bases, dtype=np.uint64),
            np.uint64(low),
        )

    @property
    def rules(self) -> tuple:
        return (self.a, self.b, self.classes, self.totals, self.bases)


def deal(packing: Packing, first: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The deal with seat ``first`` to draw first: its first decision states' keys, winners
    (-1 for a decision state) and probabilities."""
    return compiled.deal_outcomes(*packing.rules, first)


def enumerate_states(
    model: Model,
    progress: Callable[[int], None] | None = None,
    budget: int = 200_000,
    pile_top: bool = False,
) -> np.ndarray:
    """The sorted keys of every decision state reachable from the deal (``pile_top``: keys
    that keep the card under the discard top, for ``counting``)."""
    packing = Packing.of(model, pile_top)
    table = np.full(1 << 16, compiled.EMPTY, dtype=np.uint64)
    keys = np.empty(1 << 16, dtype=np.uint64)
    starts = []
    for first in (0, 1):
        found, ends, _ = deal(packing, first)
        starts.append(found[ends < 0])
    first_states = np.unique(np.concatenate(starts))
    compiled.insert_all(table, first_states)
    count = len(first_states)
    keys[:count] = first_states
    done = 0
    while done < count:
        if count + 2 * _MARGIN >= len(keys):
            grown = np.empty(2 * len(keys), dtype=np.uint64)
            grown[:count] = keys[:count]
            keys = grown
        if 4 * (count + 2 * _MARGIN) >= 3 * len(table):  # the set at most 3/4 full
            table = compiled.rehash(table, 2 * len(table))
        limit = min(len(keys), 3 * len(table) // 4) - _MARGIN  # above count
        count, now = compiled.discover(*packing.rules, keys, count, done, table, limit, budget)
        if progress is not None:
            progress(now - done)
        done = now
    del table
    return np.sort(keys[:count])


@dataclass(frozen=True)
class CutoffCheck:
    """Where the Bellman equations leave a value open and the cut-off recursion settled it:
    the states left open, the states it swept, the largest difference between its limit and a
    determined value (a check: 0 up to the tolerance), the sweeps it took, the
    largest gap between the least and greatest solution at a state called determined, and the
    states whose cut-off values alternate with the cut-off's parity and the largest swing."""

    open_states: int
    swept_states: int
    largest_disagreement: float
    sweeps: int
    determined_gap: float
    alternating_states: int
    largest_swing: float


@dataclass
class SolvedStates:
    """A round's sorted state keys with seat 0's optimal value and an optimal engine action
    each; ``follows[m]`` the value under ``matchups[m]``; greedy's gap."""

    model: Model
    pile_top: bool
    keys: np.ndarray
    values: np.ndarray
    best: np.ndarray
    matchups: list[tuple[str, str, float, float]]
    follows: np.ndarray
    greedy_not_optimal: int
    greedy_loss_there: float
    greedy_max_loss: float
    cutoff: CutoffCheck

    def start_value(self, first: int, row: int | None = None) -> float:
        """The value of the deal with seat ``first`` to draw first: optimal (``row`` None) or
        of matchup ``row``."""
        packing = Packing.of(self.model, self.pile_top)
        keys, ends, probs = deal(packing, first)
        if row is None:
            values, win, loss = self.values, 1.0, -1.0
        else:
            values = self.follows[row]
            win, loss = self.matchups[row][2], self.matchups[row][3]
        total = 0.0
        for key, end, p in zip(keys, ends, probs, strict=True):
            if end >= 0:
                total += p * (win if end == 0 else loss)
            else:
                total += p * values[int(np.searchsorted(self.keys, key))]
        return float(total)


def solve_states(
    model: Model,
    keys: np.ndarray,
    matchups: list[tuple[str, str, float, float]] | None = None,
    progress: Callable[[int], None] | None = None,
    budget: int = 200_000,
    pile_top: bool = False,
) -> SolvedStates:
    """Solve the round whose sorted state keys are ``keys`` (the env's return, ties broken
    towards greedy's move), and evaluate each matchup ``(seat 0's policy, seat 1's, value of
    seat 0 winning, of seat 1 winning)`` exactly."""
    matchups = list(matchups or [])
    codes = np.array(
        [[POLICY_CODES[p0], POLICY_CODES[p1], win, loss] for p0, p1, win, loss in matchups],
        dtype=np.float64,
    ).reshape(len(matchups), 4)
    packing = Packing.of(model, pile_top)
    lower, upper = np.zeros(len(keys)), np.zeros(len(keys))
    hi = len(keys)
    while hi > 0:
        now = compiled.bound_blocks(
            *packing.rules, keys, packing.low, hi, budget, lower, upper, TOLERANCE
        )
        if progress is not None:
            progress(hi - now)
        hi = now
    values = np.zeros(len(keys))
    check = np.zeros(7)
    compiled.cutoff_limit(*packing.rules, keys, lower, upper, values, TOLERANCE, check)
    del lower, upper
    best = np.zeros(len(keys), dtype=np.int8)
    follows = np.zeros((len(matchups), len(keys)))
    gap = np.zeros(3)
    hi = len(keys)
    while hi > 0:
        now = compiled.solve_blocks(
            *packing.rules,
            keys,
            packing.low,
            hi,
            budget,
            values,
            best,
            codes,
            follows,
            gap,
            TOLERANCE,
        )
        if progress is not None:
            progress(hi - now)
        hi = now
    return SolvedStates(
        model,
        pile_top,
        keys,
        values,
        best,
        matchups,
        follows,
        int(gap[0]),
        float(gap[1]),
        float(gap[2]),
        CutoffCheck(
            int(check[0]),
            int(check[1]),
            float(check[2]),
            int(check[3]),
            float(check[4]),
            int(check[5]),
            float(check[6]),
        ),
    )
