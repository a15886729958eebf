"""The state graph of a round: every decision state reachable from the deal (either seat to
start), numbered, with each action's successors and their probabilities (every chance node in
between expanded), as flat arrays a compiled solver reads; and the integer key of a state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trash_env.exact.model import DRAW, OVER, SWAP, WILD, Model, State

# Terminal nodes 0 and 1: seat 0 won, seat 1 won. Decision states follow.
TERMINALS = 2
_PHASE_DIGIT = {DRAW: 0, WILD: 1, SWAP: 2}
KEY_LIMIT = 2**64


def state_key(model: Model, state: State) -> int:
    """A decision state as one integer below 2**64 (mixed radix over its fields; the table's
    sorted keys find a state by binary search). The known stock's digits follow a flag only
    when there is one, so two states could in principle share a key; building a table refuses
    that (no round up to K = 3 has any), and loading one checks its keys are all distinct. A
    fixed-width stock field would rule it out by construction (a format change left to do)."""
    key = 0

    def put(digit: int, base: int) -> None:
        nonlocal key
        key = key * base + digit

    for row in state.slots:
        for mark in row:
            put(mark, 3)
    put(state.player, 2)
    put(_PHASE_DIGIT[state.phase], 3)
    count = model.classes.count
    put(state.held + 1, count + 1)
    put(state.top + 1, count + 1)
    for cls, total in enumerate(model.totals):
        put(state.below[cls], total + 1)
    if state.stock is None:
        put(0, 2)
    else:
        put(1, 2)
        for cls, total in enumerate(model.totals):
            put(state.stock[cls], total + 1)
    if key >= KEY_LIMIT:
        raise ValueError(f"sizes {model.sizes}: a state key does not fit in 64 bits")
    return key


@dataclass
class Graph:
    """Decision states ``states[i]`` (node ``TERMINALS + i``), their actions and successors.

    Node ``n``'s actions are ``action_ptr[n] .. action_ptr[n+1]`` (none for a terminal); action
    ``j`` is engine action ``actions[j]`` and leads to nodes ``succ[k]`` with probabilities
    ``prob[k]`` for ``k`` in ``succ_ptr[j] .. succ_ptr[j+1]``. ``starts[p]`` is the deal with
    seat ``p`` to draw first, a distribution over nodes (``start_nodes``, ``start_probs``).
    """

    model: Model
    states: list[State]
    player: np.ndarray  # int8 per node: seat to act (-1 terminal)
    action_ptr: np.ndarray
    actions: np.ndarray
    succ_ptr: np.ndarray
    succ: np.ndarray
    prob: np.ndarray
    start_ptr: np.ndarray
    start_nodes: np.ndarray
    start_probs: np.ndarray

    @property
    def nodes(self) -> int:
        return TERMINALS + len(self.states)


def build_graph(model: Model, progress: Callable[[int], None] | None = None) -> Graph:
    """Enumerate every decision state reachable from the deal, breadth first."""
    index: dict[State, int] = {}
    states: list[State] = []

    def node(state: State) -> int:
        if state.phase == OVER:
            return state.winner
        found = index.get(state)
        if found is None:
            found = index[state] = TERMINALS + len(states)
            states.append(state)
        return found

    start_ptr, start_nodes, start_probs = [0], [], []
    for first in (0, 1):
        for state, p in model.next_decisions(model.initial(first)).items():
            start_nodes.append(node(state))
            start_probs.append(p)
        start_ptr.append(len(start_nodes))
    player = [-1] * TERMINALS
    action_ptr = [0] * (TERMINALS + 1)
    actions: list[int] = []
    succ_ptr = [0]
    succ: list[int] = []
    prob: list[float] = []
    done = 0
    while done < len(states):
        state = states[done]
        done += 1
        player.append(state.player)
        for action in model.legal_actions(state):
            actions.append(action)
            for child, p in model.next_decisions(state, action).items():
                succ.append(node(child))
                prob.append(p)
            succ_ptr.append(len(succ))
        action_ptr.append(len(actions))
        if progress is not None and done % 10_000 == 0:
            progress(10_000)
    return Graph(
        model=model,
        states=states,
        player=np.array(player, dtype=np.int8),
        action_ptr=np.array(action_ptr, dtype=np.int64),
        actions=np.array(actions, dtype=np.int8),
        succ_ptr=np.array(succ_ptr, dtype=np.int64),
        succ=np.array(succ, dtype=np.int32),
        prob=np.array(prob, dtype=np.float64),
        start_ptr=np.array(start_ptr, dtype=np.int64),
        start_nodes=np.array(start_nodes, dtype=np.int32),
        start_probs=np.array(start_probs, dtype=np.float64),
    )
