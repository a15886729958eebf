"""Value iteration on a round's state graph, compiled by numba.

The graph has cycles (passes, and reshuffles that rebuild the stock), so values are found by
iteration rather than one backward pass. The iteration is the cut-off recursion itself: whole
(Jacobi) sweeps from 0, sweep ``T`` being the value of the round cut off after ``T`` turns and
paying 0 there, as the env's ``max_turns`` pays, until no value moves by more than the
tolerance. The objective is the env's return, P(seat 0 wins) - P(seat 1 wins), as the limit of
ever later cut-offs; where the Bellman equations have several solutions (pass cycles) this
limit is the one the env pays, and whole sweeps reach it whatever the order of the nodes. Where
the cut-off values settle into alternating with the cut-off's parity instead, the value is the
mean of the two (the parity a fair coin, known to both players).

Values are seat 0's. A node is solved (max for seat 0, min for seat 1) or follows fixed
policies (each action weighted), which gives the exact value of a pair of policies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trash_env.exact.graph import TERMINALS, Graph, state_key
from trash_env.exact.model import DRAW
from trash_env.numba_cache import njit

MAX, MIN, FOLLOW = 0, 1, 2
TOLERANCE = 1e-14  # the largest change in the last sweep
TIE = 1e-12  # actions this close to the best are optimal (the preferred one is chosen)


@njit(cache=True)
def _sweeps(
    mode, action_ptr, succ_ptr, succ, prob, weights, values, tol, max_sweeps, sequence, midturn
):
    """Whole (Jacobi) sweeps, one a turn: sweep ``T`` from 0 is the round cut off after ``T``
    turns (paying 0), whatever the order of the nodes; nodes in mid-turn (``midturn``: a
    wild's slot, a swap) read the same sweep's values, so ``sequence`` lists them deepest
    first, then the turns' first decisions. Until the largest change is below ``tol``, or
    until the values alternate with the cut-off's parity (sweep T equal to T - 2): then the
    mean of the last two. Returns the sweeps taken, the last change and the largest swing."""
    new = values.copy()
    before = values.copy()
    for sweep in range(max_sweeps):
        delta = 0.0
        alternation = 0.0
        for node in sequence:
            how = mode[node]
            if how == MAX:
                best = -np.inf
            elif how == MIN:
                best = np.inf
            else:
                best = 0.0
            for a in range(action_ptr[node], action_ptr[node + 1]):
                q = 0.0
                for k in range(succ_ptr[a], succ_ptr[a + 1]):
                    t = succ[k]
                    q += prob[k] * (new[t] if midturn[t] else values[t])
                if how == MAX:
                    best = max(best, q)
                elif how == MIN:
                    best = min(best, q)
                else:
                    best += weights[a] * q
            delta = max(delta, abs(best - values[node]))
            alternation = max(alternation, abs(best - before[node]))
            new[node] = best
        if delta < tol or (sweep > 1 and alternation < tol):
            swing = 0.0
            for node in sequence:
                swing = max(swing, abs(new[node] - values[node]))
                values[node] = (new[node] + values[node]) / 2
            return sweep + 1, delta, swing
        before[:] = values
        values[:] = new
    return max_sweeps, np.inf, np.inf


def turn_order(graph: Graph) -> tuple[np.ndarray, np.ndarray]:
    """The order a sweep visits the nodes (mid-turn decisions deepest first, a lay raising a
    mark: the larger key first; then every turn's first decision) and the mid-turn flags. A
    hand-built graph without states is all turns' first decisions."""
    midturn = np.zeros(graph.nodes, dtype=np.bool_)
    keys = np.zeros(graph.nodes, dtype=np.uint64)
    for i, state in enumerate(graph.states):
        if state is not None and state.phase != DRAW:
            midturn[TERMINALS + i] = True
            keys[TERMINALS + i] = state_key(graph.model, state)
    mids = np.nonzero(midturn)[0]
    starts = np.arange(TERMINALS, graph.nodes)[~midturn[TERMINALS:]]
    return np.concatenate((mids[np.argsort(keys[mids])[::-1]], starts)), midturn


@njit(cache=True)
def _action_values(action_ptr, succ_ptr, succ, prob, values):
    out = np.zeros(succ_ptr.shape[0] - 1)
    for a in range(out.shape[0]):
        q = 0.0
        for k in range(succ_ptr[a], succ_ptr[a + 1]):
            q += prob[k] * values[succ[k]]
        out[a] = q
    return out


@njit(cache=True)
def _choose(player, action_ptr, q, preferred, tie):
    """Per node the index of an optimal action: the preferred one when it is within ``tie``
    of the best, else the first best (-1 for terminals)."""
    nodes = player.shape[0]
    out = np.full(nodes, -1, dtype=np.int64)
    for node in range(TERMINALS, nodes):
        lo, hi = action_ptr[node], action_ptr[node + 1]
        sign = 1.0 if player[node] == 0 else -1.0
        best = -np.inf
        for a in range(lo, hi):
            best = max(best, sign * q[a])
        for a in range(lo, hi):
            if sign * q[a] >= best - tie and (out[node] < 0 or a == preferred[node]):
                out[node] = a
    return out


@dataclass
class Solution:
    values: np.ndarray  # per node, seat 0's value
    action_values: np.ndarray  # per action index of the graph
    best: np.ndarray  # per node, the index of the chosen optimal action (-1 terminal)
    sweeps: int
    last_change: float
    swing: float  # the largest alternation with the cut-off's parity (0: a limit)


def _terminal_values(
    graph: Graph, win: float = 1.0, loss: float = -1.0, cutoff: float = 0.0
) -> np.ndarray:
    values = np.full(graph.nodes, cutoff)
    values[0], values[1] = win, loss
    return values


def solve(
    graph: Graph,
    preferred: np.ndarray | None = None,
    tol: float = TOLERANCE,
    max_sweeps: int = 1_000_000,
    cutoff: float = 0.0,
) -> Solution:
    """The optimal values (the env's return, the limit of ever later cut-offs) and one optimal
    action per decision state; ``preferred`` (an action index per node, -1 for none) breaks
    ties. ``cutoff`` is what a cut-off round pays seat 0: 0 as the env pays; -1 and 1 give the
    least and the greatest solution of the Bellman equations (the tests' bounds)."""
    mode = np.where(graph.player == 0, MAX, MIN).astype(np.int8)
    values = _terminal_values(graph, cutoff=cutoff)
    weights = np.zeros(len(graph.actions))
    sweeps, change, swing = _sweeps(
        mode,
        graph.action_ptr,
        graph.succ_ptr,
        graph.succ,
        graph.prob,
        weights,
        values,
        tol,
        max_sweeps,
        *turn_order(graph),
    )
    q = _action_values(graph.action_ptr, graph.succ_ptr, graph.succ, graph.prob, values)
    if sweeps >= max_sweeps:
        raise ValueError(f"value iteration did not converge in {max_sweeps} sweeps")
    if preferred is None:
        preferred = np.full(graph.nodes, -1, dtype=np.int64)
    best = _choose(graph.player, graph.action_ptr, q, preferred, TIE)
    return Solution(values, q, best, int(sweeps), float(change), float(swing))


def follow(
    graph: Graph,
    weights: np.ndarray,
    win: float = 1.0,
    loss: float = -1.0,
    tol: float = TOLERANCE,
    max_sweeps: int = 1_000_000,
) -> np.ndarray:
    """Per node, the exact value of play that takes action ``j`` with probability
    ``weights[j]`` (the two seats' policies in one array); ``win``/``loss`` are the values of
    seat 0 winning or losing (1 and 1 give the probability that the round ends)."""
    mode = np.full(graph.nodes, FOLLOW, dtype=np.int8)
    values = _terminal_values(graph, win, loss)
    _sweeps(
        mode,
        graph.action_ptr,
        graph.succ_ptr,
        graph.succ,
        graph.prob,
        weights,
        values,
        tol,
        max_sweeps,
        *turn_order(graph),
    )
    return values


def start_value(graph: Graph, values: np.ndarray, first: int) -> float:
    """The value of the deal with seat ``first`` to draw first."""
    lo, hi = graph.start_ptr[first], graph.start_ptr[first + 1]
    return float(np.dot(graph.start_probs[lo:hi], values[graph.start_nodes[lo:hi]]))
