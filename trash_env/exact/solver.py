"""Value iteration on a round's state graph, compiled by numba.

The graph has cycles (passes, and reshuffles that rebuild the stock), so values are found by
iteration rather than one backward pass: Gauss-Seidel sweeps, deepest nodes first, from 0 until
no value moves by more than the tolerance. Starting from 0 is the game cut off after n turns
with 0 for the cut-off, as the env's ``max_turns`` pays; so the objective is the env's return,
P(seat 0 wins) - P(seat 1 wins), and a round both players prefer never to finish is worth 0.

Values are seat 0's. A node is solved (max for seat 0, min for seat 1) or follows fixed
policies (each action weighted), which gives the exact value of a pair of policies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trash_env.exact.graph import TERMINALS, Graph
from trash_env.numba_cache import njit

MAX, MIN, FOLLOW = 0, 1, 2
TOLERANCE = 1e-14  # the largest change in the last sweep
TIE = 1e-12  # actions this close to the best are optimal (the preferred one is chosen)


@njit(cache=True)
def _sweeps(mode, action_ptr, succ_ptr, succ, prob, weights, values, tol, max_sweeps):
    """Gauss-Seidel sweeps, last node first, until the largest change is below ``tol``;
    return the sweeps taken and the last change."""
    nodes = mode.shape[0]
    delta = 0.0
    for sweep in range(max_sweeps):
        delta = 0.0
        for node in range(nodes - 1, TERMINALS - 1, -1):
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
                    q += prob[k] * values[succ[k]]
                if how == MAX:
                    best = max(best, q)
                elif how == MIN:
                    best = min(best, q)
                else:
                    best += weights[a] * q
            change = abs(best - values[node])
            if change > delta:
                delta = change
            values[node] = best
        if delta < tol:
            return sweep + 1, delta
    return max_sweeps, delta


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


def _terminal_values(graph: Graph, win: float = 1.0, loss: float = -1.0) -> np.ndarray:
    values = np.zeros(graph.nodes)
    values[0], values[1] = win, loss
    return values


def solve(
    graph: Graph,
    preferred: np.ndarray | None = None,
    tol: float = TOLERANCE,
    max_sweeps: int = 1_000_000,
) -> Solution:
    """The optimal values (the env's return) and one optimal action per decision state;
    ``preferred`` (an action index per node, -1 for none) breaks ties."""
    mode = np.where(graph.player == 0, MAX, MIN).astype(np.int8)
    values = _terminal_values(graph)
    weights = np.zeros(len(graph.actions))
    sweeps, change = _sweeps(
        mode,
        graph.action_ptr,
        graph.succ_ptr,
        graph.succ,
        graph.prob,
        weights,
        values,
        tol,
        max_sweeps,
    )
    q = _action_values(graph.action_ptr, graph.succ_ptr, graph.succ, graph.prob, values)
    if preferred is None:
        preferred = np.full(graph.nodes, -1, dtype=np.int64)
    best = _choose(graph.player, graph.action_ptr, q, preferred, TIE)
    return Solution(values, q, best, int(sweeps), float(change))


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
    )
    return values


def start_value(graph: Graph, values: np.ndarray, first: int) -> float:
    """The value of the deal with seat ``first`` to draw first."""
    lo, hi = graph.start_ptr[first], graph.start_ptr[first + 1]
    return float(np.dot(graph.start_probs[lo:hi], values[graph.start_nodes[lo:hi]]))
