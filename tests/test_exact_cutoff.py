"""Unique values in pass cycles: the solvers compute the env's return as the limit of the
round cut off after T decisions (paying 0 there), whatever the order of the states. Held to
the cut-off recursion written out directly (backward induction over T), on a hand-built graph
where waiting for the cut-off pays and on a pass-cycle position of the real model."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from trash_env.engine import DOWN, WILD_UP
from trash_env.exact.graph import TERMINALS, Graph, build_graph, state_key
from trash_env.exact.model import DRAW, OVER, Model, State
from trash_env.exact.rounds import enumerate_states, solve_states
from trash_env.exact.solver import solve

WIN, LOSS = 0, 1


def hand_graph(players: list[int], actions: list[list[dict[int, float]]]) -> Graph:
    """A graph given per decision node (numbered from ``TERMINALS``) its player and, per
    action, its successors' probabilities (node 0: seat 0 won, node 1: seat 1 won)."""
    action_ptr, succ_ptr, succ, prob = [0] * (TERMINALS + 1), [0], [], []
    for node_actions in actions:
        for outcomes in node_actions:
            succ += list(outcomes)
            prob += list(outcomes.values())
            succ_ptr.append(len(succ))
        action_ptr.append(action_ptr[-1] + len(node_actions))
    return Graph(
        model=Model((1, 1)),
        states=cast(list[State], [None] * len(players)),
        player=np.array([-1] * TERMINALS + players, dtype=np.int8),
        action_ptr=np.array(action_ptr, dtype=np.int64),
        actions=np.zeros(action_ptr[-1], dtype=np.int8),
        succ_ptr=np.array(succ_ptr, dtype=np.int64),
        succ=np.array(succ, dtype=np.int32),
        prob=np.array(prob, dtype=np.float64),
        start_ptr=np.array([0, 1, 2], dtype=np.int64),
        start_nodes=np.array([TERMINALS, TERMINALS], dtype=np.int32),
        start_probs=np.ones(2),
    )


def cutoff_values(players, actions, horizon: int) -> list[float]:
    """The round cut off after ``horizon`` decisions, paying 0: backward induction over T."""
    value = [0.0] * len(players)

    def worth(node: int, previous: list[float]) -> float:
        return 1.0 if node == WIN else -1.0 if node == LOSS else previous[node - TERMINALS]

    for _ in range(horizon):
        previous = value
        value = []
        for player, node_actions in zip(players, actions, strict=True):
            q = [sum(p * worth(t, previous) for t, p in o.items()) for o in node_actions]
            value.append(max(q) if player == 0 else min(q))
    return value


def permuted(players, actions, order: list[int]):
    """The same graph with decision node ``order[i]`` renumbered ``i``."""
    new = {TERMINALS + old: TERMINALS + i for i, old in enumerate(order)}
    new.update({WIN: WIN, LOSS: LOSS})
    return (
        [players[old] for old in order],
        [[{new[t]: p for t, p in o.items()} for o in actions[old]] for old in order],
    )


# Seat 0 at node 2 may pass (to node 3) or take a coin flip whose losing half is a forced
# walk of 20 decisions to a loss; seat 1 at node 3 may pass back or give seat 0 a 0.8 edge.
# Passing for ever is worth 0 and the coin flip too, so the Bellman equations hold for any
# value from 0 to 0.8 at nodes 2 and 3. Cut off after T decisions, seat 0 passes until the
# forced walk can no longer finish, then flips: the limit is 0.5.
WALK = 20
PLAYERS = [0, 1] + [0] * WALK
ACTIONS = [
    [{3: 1.0}, {WIN: 0.5, 4: 0.5}],
    [{2: 1.0}, {WIN: 0.9, LOSS: 0.1}],
    *[[{5 + i: 1.0}] for i in range(WALK - 1)],
    [{LOSS: 1.0}],
]


def test_the_solver_is_the_cutoff_recursion_where_waiting_for_the_cutoff_pays():
    graph = hand_graph(PLAYERS, ACTIONS)
    solution = solve(graph)
    direct = cutoff_values(PLAYERS, ACTIONS, 400)
    assert direct[:2] == pytest.approx([0.5, 0.5], abs=1e-15)
    assert np.abs(solution.values[TERMINALS:] - direct).max() < 1e-12
    # The equations leave nodes 2 and 3 open: their least and greatest solutions differ.
    low, high = (solve(graph, cutoff=c).values[TERMINALS] for c in (-1.0, 1.0))
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.8, abs=1e-12)
    order = list(np.random.default_rng(0).permutation(len(PLAYERS)))
    again = solve(hand_graph(*permuted(PLAYERS, ACTIONS, order))).values[TERMINALS:]
    assert np.array_equal(again, solution.values[TERMINALS:][order])


def pass_cycle_position(stock: int = 5) -> State:
    """After a reshuffle at 2 slots each: a wild face-up in each layout (on seat 0's Ace
    slot and seat 1's 2 slot), the other slot face-down,
    every Ace and 2 under the discard top (dead), a stock of dead cards; both face-down
    cards are the other two wilds. Whoever draws the last stock card hands the other the
    first draw from the rebuilt stock, where any Ace or 2 wins: both would rather pass."""
    return State(
        ((WILD_UP, DOWN), (DOWN, WILD_UP)), 0, DRAW, -1, 0, (39 - stock, 4, 4, 0), (stock, 0, 0, 0)
    )


def model_cutoff_values(model: Model, states: list[State], horizon: int) -> dict[State, float]:
    """Backward induction over T straight from the model's rules, T counting turns as the
    env's ``max_turns`` does: a decision in mid-turn (a wild's slot, a swap) reads the same
    T, a turn's first decision the previous one."""
    moves = {
        s: [model.next_decisions(s, action) for action in model.legal_actions(s)] for s in states
    }

    def one_turn_more(previous: dict[State, float]) -> dict[State, float]:
        value: dict[State, float] = {}

        def worth(state: State, first: bool = False) -> float:
            if state.phase == OVER:
                return 1.0 if state.winner == 0 else -1.0
            if state.phase == DRAW and not first:
                return previous[state]
            if state not in value:
                q = [sum(p * worth(t) for t, p in o.items()) for o in moves[state]]
                value[state] = max(q) if state.player == 0 else min(q)
            return value[state]

        for s in states:
            worth(s, first=True)
        return value

    values: dict[State, float] = dict.fromkeys(states, 0.0)
    for _ in range(horizon):
        values = one_turn_more(values)
    return values


def test_a_pass_cycle_position_in_two_orders_and_by_the_cutoff_recursion():
    model = Model((2, 2))
    graph = build_graph(model, roots=[pass_cycle_position()])
    solution = solve(graph)
    low, high = solve(graph, cutoff=-1.0).values, solve(graph, cutoff=1.0).values
    assert (high - low > 0.05).sum() >= 10  # the equations leave these states open
    assert low[TERMINALS] < -0.05 and high[TERMINALS] > 0.05
    assert solution.values[TERMINALS] == 0.0  # both pass for ever
    direct = model_cutoff_values(model, graph.states, solution.sweeps + 20)
    found = dict(zip(graph.states, solution.values[TERMINALS:], strict=True))
    assert max(abs(found[s] - direct[s]) for s in graph.states) < 1e-12
    # The same states numbered in another order: identical values.
    order = np.random.default_rng(1).permutation(len(graph.states))
    shuffled = build_graph(model, roots=[graph.states[i] for i in order])
    again = dict(zip(shuffled.states, solve(shuffled).values[TERMINALS:], strict=True))
    assert again == found


@pytest.mark.parametrize("sizes", [(1, 2), (2, 2)])
def test_the_compiled_layout_pair_solve_finds_the_cutoff_limit(sizes):
    """The compiled solve (key order, layout pair by layout pair, the open states settled by
    the cut-off recursion on what they reach) gives the Python solver's values (discovery
    order, whole sweeps over the whole graph) on every state."""
    model = Model(sizes)
    graph = build_graph(model)
    reference = solve(graph).values[TERMINALS:]
    keys = enumerate_states(model)
    solved = solve_states(model, keys)
    where = np.searchsorted(keys, [state_key(model, s) for s in graph.states])
    assert np.abs(solved.values[where] - reference).max() < 1e-12
    low, high = solve(graph, cutoff=-1.0).values, solve(graph, cutoff=1.0).values
    assert solved.cutoff.open_states == int((high - low > 1e-9).sum())
    assert solved.cutoff.largest_disagreement < 1e-12
    if sizes == (2, 2):
        assert solved.cutoff.open_states > 100
        position = np.searchsorted(keys, state_key(model, pass_cycle_position(39)))
        assert keys[position] == state_key(model, pass_cycle_position(39))
        assert solved.values[position] == 0.0
