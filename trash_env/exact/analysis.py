"""Exact figures from the round graphs, no sampling: the value of any pair of fixed policies,
greedy's distance to optimal play, a skill index, and whole games composed from rounds.

A matchup's *win rate* for policy X against Y is X's probability of winning the round averaged
over X's seat and the first player (the four seatings equally likely), as evaluate.py's
duplicate deals average them. A round that never ends counts for neither.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from trash_env.exact.graph import TERMINALS, Graph, build_graph
from trash_env.exact.model import Model
from trash_env.exact.solver import Solution, follow, solve, start_value
from trash_env.exact.tables import preferred_actions
from trash_env.rules import Rules

POLICIES = ("optimal", "greedy", "random")


@dataclass
class Solved:
    graph: Graph
    solution: Solution


@lru_cache(maxsize=8)
def solved(sizes: tuple[int, int], rules: Rules) -> Solved:
    graph = build_graph(Model(sizes, rules))
    return Solved(graph, solve(graph, preferred_actions(graph)))


def policy_weights(found: Solved, policy: str) -> np.ndarray:
    """Per action of the graph, the probability ``policy`` takes it at its node."""
    graph = found.graph
    weights = np.zeros(len(graph.actions))
    if policy == "optimal":
        weights[found.solution.best[TERMINALS:]] = 1.0
    elif policy == "greedy":
        weights[preferred_actions(graph)[TERMINALS:]] = 1.0
    elif policy == "random":
        counts = np.diff(graph.action_ptr)[TERMINALS:]
        weights[:] = np.repeat(1.0 / counts, counts)
    else:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    return weights


def pair(found: Solved, seat0: str, seat1: str) -> np.ndarray:
    """The weights of ``seat0``'s policy at seat 0's nodes and ``seat1``'s at seat 1's."""
    graph = found.graph
    first, second = policy_weights(found, seat0), policy_weights(found, seat1)
    node_of_action = np.repeat(np.arange(graph.nodes), np.diff(graph.action_ptr))
    return np.where(graph.player[node_of_action] == 0, first, second)


def win_rate(found: Solved, policy: str, against: str) -> float:
    """``policy``'s probability of winning the round against ``against`` (seats and first
    player averaged)."""
    graph = found.graph
    total = 0.0
    for seat0, seat1, mine in ((policy, against, 0), (against, policy, 1)):
        weights = pair(found, seat0, seat1)
        wins = follow(graph, weights, *((1.0, 0.0) if mine == 0 else (0.0, 1.0)))
        total += sum(start_value(graph, wins, first) for first in (0, 1))
    return total / 4


def greedy_gap(found: Solved) -> dict[str, float]:
    """Decision states where greedy's move is not optimal: their share and the value (seat
    to act's, in points of the env's return) lost there."""
    graph, q = found.graph, found.solution.action_values
    best = found.solution.values
    chosen = preferred_actions(graph)
    losses = []
    for node in range(TERMINALS, graph.nodes):
        sign = 1.0 if graph.player[node] == 0 else -1.0
        losses.append(sign * (best[node] - q[chosen[node]]))
    lost = np.array(losses)
    worse = lost > 1e-12
    return {
        "states": int(len(lost)),
        "not_optimal": int(worse.sum()),
        "share": float(worse.mean()),
        "mean_loss_there": float(lost[worse].mean()) if worse.any() else 0.0,
        "max_loss": float(lost.max()),
    }


def end_probability(found: Solved, seat0: str, seat1: str) -> tuple[float, float]:
    """The probability that the round ends, per first player, under the policy pair."""
    values = follow(found.graph, pair(found, seat0, seat1), 1.0, 1.0)
    return start_value(found.graph, values, 0), start_value(found.graph, values, 1)


def skill_index(found: Solved) -> float:
    """Skill's share of the result: how far optimal play lifts the win rate above a beginner
    (uniformly random play) towards a sure win, ``(W(optimal vs random) - 1/2) / (1 - 1/2)``
    (docs/skill.md): 0 when a beginner does as well, 1 when optimal play always wins."""
    return (win_rate(found, "optimal", "random") - 0.5) / 0.5


def round_report(sizes: tuple[int, int], rules: Rules | None = None) -> dict:
    """Every exact figure of the round ``sizes`` (docs/skill.md, item by item)."""
    found = solved(sizes, rules or Rules())
    matchups = {
        f"{a} vs {b}": win_rate(found, a, b)
        for a, b in (
            ("optimal", "optimal"),
            ("optimal", "greedy"),
            ("optimal", "random"),
            ("greedy", "greedy"),
            ("greedy", "random"),
        )
    }
    values = found.solution.values
    return {
        "sizes": list(sizes),
        "states": len(found.graph.states),
        # Seat 0's probability of winning under optimal play, seat 0 first and seat 1 first.
        "optimal_seat0_wins": [(1 + start_value(found.graph, values, f)) / 2 for f in (0, 1)],
        "win_rates": matchups,
        "greedy_loss_points": 100 * (0.5 - win_rate(found, "greedy", "optimal")),
        "greedy_gap": greedy_gap(found),
        "skill_index": skill_index(found),
        "end_probability_optimal": end_probability(found, "optimal", "optimal"),
    }


def game_win_probability(
    round_win: dict[tuple[int, int, int], float], sizes: tuple[int, int], first: int
) -> float:
    """Seat 0's probability of winning the game from layouts ``sizes`` with seat ``first`` to
    start, when ``round_win[(a, b, f)]`` is seat 0's probability of winning a round at sizes
    ``(a, b)`` with ``f`` first: the winner shrinks by one and starts the next round, and the
    first to shrink to 0 wins."""
    memo: dict[tuple[int, int, int], float] = {}

    def win(a: int, b: int, f: int) -> float:
        if a == 0:
            return 1.0
        if b == 0:
            return 0.0
        if (a, b, f) not in memo:
            p = round_win[(a, b, f)]
            memo[(a, b, f)] = p * win(a - 1, b, 0) + (1 - p) * win(a, b - 1, 1)
        return memo[(a, b, f)]

    return win(sizes[0], sizes[1], first)
