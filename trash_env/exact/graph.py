"""The state graph of a round: every decision state reachable from the deal (either seat to
start), numbered, with each action's successors and their probabilities (every chance node in
between expanded), as flat arrays a compiled solver reads; and the integer key of a state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from trash_env.engine import DOWN, NATURAL, WILD_UP
from trash_env.exact.model import DRAW, OVER, SWAP, WILD, Model, State

# Terminal nodes 0 and 1: seat 0 won, seat 1 won. Decision states follow.
TERMINALS = 2
_PHASE_DIGIT = {DRAW: 0, WILD: 1, SWAP: 2}
_DIGIT_PHASE = {digit: phase for phase, digit in _PHASE_DIGIT.items()}
_MARK_DIGIT = {DOWN: 0, WILD_UP: 1, NATURAL: 2}  # a mark only rises: DOWN, then either
_DIGIT_MARK = {digit: mark for mark, digit in _MARK_DIGIT.items()}
KEY_LIMIT = 2**64 - 1


def key_bases(model: Model, pile_top: bool = False) -> list[int]:
    """The radix of each field of a state key (format 2), most significant first: the marks
    of seat 0's slots then seat 1's, the player, the phase, the held card, the discard top,
    the counts below the top, the flag of a known stock and its counts (and, with
    ``pile_top``, the card under the discard top: the pile's top mid-turn). Every field has its
    place whatever the others hold, so the packing is injective on the fields' ranges."""
    count = model.classes.count
    counts = [total + 1 for total in model.totals]
    bases = [3] * sum(model.sizes) + [2, 3, count + 1, count + 1] + counts + [2] + counts
    if pile_top:  # counting's evaluation only: the card under the top, the pile's top mid-turn
        bases.append(count + 1)
    product = 1
    for base in bases:
        product *= base
    if product >= KEY_LIMIT:  # 2**64 - 1 marks an empty place in the compiled hash set
        raise ValueError(f"sizes {model.sizes}: a state key does not fit in 64 bits")
    return bases


def _digits(model: Model, state: State) -> list[int]:
    marks = [_MARK_DIGIT[mark] for row in state.slots for mark in row]
    stock = state.stock if state.stock is not None else (0,) * model.classes.count
    return (
        marks
        + [state.player, _PHASE_DIGIT[state.phase], state.held + 1, state.top + 1]
        + list(state.below)
        + [0 if state.stock is None else 1]
        + list(stock)
    )


def state_key(model: Model, state: State) -> int:
    """A decision state as one integer below 2**64 - 1 (format 2: a mixed radix with every
    field at a fixed place, :func:`key_bases`; the table's sorted keys find a state by binary
    search). The same packing as the compiled enumeration's."""
    key = 0
    for digit, base in zip(_digits(model, state), key_bases(model), strict=True):
        if not 0 <= digit < base:
            raise ValueError(f"a state field out of its range: {state}")
        key = key * base + digit
    return key


def state_from_key(model: Model, key: int) -> State:
    """The decision state of a key (format 2)."""
    bases = key_bases(model)
    digits = []
    for base in reversed(bases):
        key, digit = divmod(key, base)
        digits.append(digit)
    digits.reverse()
    a, b = model.sizes
    count = model.classes.count
    marks = [_DIGIT_MARK[d] for d in digits[: a + b]]
    player, phase, held, top = digits[a + b : a + b + 4]
    below = tuple(digits[a + b + 4 : a + b + 4 + count])
    known = digits[a + b + 4 + count]
    stock = tuple(digits[a + b + 5 + count :]) if known else None
    return State(
        (tuple(marks[:a]), tuple(marks[a:])),
        player,
        _DIGIT_PHASE[phase],
        held - 1,
        top - 1,
        below,
        stock,
    )


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


def build_graph(
    model: Model,
    progress: Callable[[int], None] | None = None,
    roots: list[State] | None = None,
) -> Graph:
    """Enumerate every decision state reachable from the deal, breadth first; or, with
    ``roots``, every state reachable from those decision states (each root then its own
    start, for both first players: a position's graph, for the tests)."""
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
        if roots is None:
            starts = model.next_decisions(model.initial(first))
        else:
            starts = {root: 1.0 / len(roots) for root in roots}
        for state, p in starts.items():
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
