"""The compiled enumeration (trash_env/exact/compiled.py, rounds.py) held to the model: the key
packing is injective on its fields' ranges, the compiled rules give the model's successors and
probabilities, and the compiled build, solved layout pair by layout pair, finds the states,
values and moves of the shipped K = 2 table."""

from __future__ import annotations

import numpy as np
import pytest
from test_exact_model import round_game

from agents.bots.heuristics import CountingAgent
from trash_env.engine import DOWN, NATURAL, WILD_UP
from trash_env.exact import compiled
from trash_env.exact.graph import (
    KEY_LIMIT,
    build_graph,
    key_bases,
    state_from_key,
    state_key,
)
from trash_env.exact.model import DRAW, SWAP, WILD, Model, State, from_game
from trash_env.exact.rounds import Packing, enumerate_states, solve_states
from trash_env.exact.solver import follow, solve, start_value
from trash_env.exact.tables import SHIPPED, Tables, build, preferred_actions, table_name
from trash_env.rules import Rules
from trash_env.view import PublicView


def random_state(model: Model, rng: np.random.Generator) -> State:
    """A state with every field drawn anywhere in its range (reachable or not)."""
    a, b = model.sizes
    count = model.classes.count
    marks = (DOWN, NATURAL, WILD_UP)
    slots = tuple(tuple(int(rng.choice(marks)) for _ in range(n)) for n in (a, b))
    below = tuple(int(rng.integers(0, t + 1)) for t in model.totals)
    stock = None
    if rng.random() < 0.5:
        stock = tuple(int(rng.integers(0, t + 1)) for t in model.totals)
    return State(
        slots,  # type: ignore[arg-type]
        int(rng.integers(0, 2)),
        int(rng.choice([DRAW, WILD, SWAP])),
        int(rng.integers(-1, count)),
        int(rng.integers(-1, count)),
        below,
        stock,
    )


def fields(model: Model, state: State) -> np.ndarray:
    """The compiled form of a state: its flat fields."""
    count = model.classes.count
    stock = state.stock if state.stock is not None else (0,) * count
    flat = [m for row in state.slots for m in row]
    flat += [state.player, state.phase, state.held, state.top, *state.below]
    flat += [0 if state.stock is None else 1, *stock, -1, -1]
    return np.array(flat, dtype=np.int64)


@pytest.mark.parametrize(
    "sizes, jokers", [((1, 1), False), ((2, 3), True), ((5, 5), False), ((4, 4), True)]
)
def test_the_key_packing_is_injective_on_its_fields_ranges(sizes, jokers):
    """Every field has its own place (a mixed radix): the largest key fits below 2**64 - 1,
    every field's extremes and random states read back unchanged, and the compiled packing is
    the same number."""
    model = Model(sizes, Rules(jokers=jokers))
    bases = key_bases(model)
    assert (
        np.prod([float(b) for b in bases]) < 2.0**64 and np.prod(bases, dtype=object) <= KEY_LIMIT
    )
    packing = Packing.of(model)
    rng = np.random.default_rng(7)
    seen: dict[int, State] = {}
    for _ in range(3000):
        state = random_state(model, rng)
        key = state_key(model, state)
        assert state_from_key(model, key) == state
        assert (
            int(
                compiled.encode(
                    packing.a, packing.b, packing.classes, packing.bases, fields(model, state)
                )
            )
            == key
        )
        assert seen.setdefault(key, state) == state
    top = State(
        ((WILD_UP,) * sizes[0], (WILD_UP,) * sizes[1]),
        1,
        SWAP,
        model.classes.count - 1,
        model.classes.count - 1,
        model.totals,
        model.totals,
    )
    assert state_from_key(model, state_key(model, top)) == top
    assert state_key(model, top) < KEY_LIMIT


def test_a_key_beyond_64_bits_is_refused():
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        key_bases(Model((6, 6), Rules(jokers=True)))


@pytest.mark.parametrize("sizes", [(1, 2), (2, 2)])
def test_compiled_rules_give_the_models_successors_and_probabilities(sizes):
    model = Model(sizes)
    packing = Packing.of(model)
    keys = enumerate_states(model)
    rng = np.random.default_rng(3)
    for key in rng.choice(keys, 300, replace=False):
        state = state_from_key(model, int(key))
        for action in model.legal_actions(state):
            expected = model.next_decisions(state, action)
            found, ends, probs = compiled.action_outcomes(*packing.rules, key, action)
            got = {}
            for k, end, p in zip(found, ends, probs, strict=True):
                child = ("end", int(end)) if end >= 0 else state_from_key(model, int(k))
                got[child] = p
            want: dict = {}
            for s, p in expected.items():  # the model keeps each end's last layout apart
                child = ("end", s.winner) if s.phase == 0 else s
                want[child] = want.get(child, 0.0) + p
            assert got.keys() == want.keys()
            assert all(abs(got[s] - want[s]) < 1e-13 for s in want)


def test_the_compiled_enumeration_finds_the_python_graphs_states_and_values():
    model = Model((1, 2))
    graph = build_graph(model)
    keys = enumerate_states(model)
    assert sorted(state_key(model, s) for s in graph.states) == keys.tolist()
    greedy_first = [("greedy", "optimal", 1.0, 0.0)]
    solved = solve_states(model, keys, greedy_first)
    reference = solve(graph, preferred_actions(graph))
    for first in (0, 1):
        assert abs(solved.start_value(first) - start_value(graph, reference.values, first)) < 1e-12
    weights = np.zeros(len(graph.actions))
    greedy = preferred_actions(graph)
    for node, state in enumerate(graph.states, start=2):  # greedy at seat 0, optimal at 1
        weights[greedy[node] if state.player == 0 else reference.best[node]] = 1.0
    values = follow(graph, weights, 1.0, 0.0)
    for first in (0, 1):
        exact = start_value(graph, values, first)
        assert abs(solved.start_value(first, row=0) - exact) < 1e-12


def test_the_shipped_table_is_what_the_compiled_build_makes():
    """The shipped K = 2 table (format 3) holds the compiled build's states, values (to 1e-12:
    the floating-point sums may differ between machines) and moves."""
    shipped = Tables.load(SHIPPED / table_name(Rules(), 2), Rules())
    built = build(Rules(), 2, progress=False)
    for sizes, old in shipped.rounds.items():
        new = built.rounds[sizes]
        assert np.array_equal(new.keys, old.keys)
        assert np.abs(new.values - old.values).max() < 1e-12
        assert np.array_equal(new.actions, old.actions)
        assert np.allclose(new.start_values, old.start_values, atol=1e-12, rtol=0)
    again = Tables.from_bytes(built.to_bytes(), Rules())
    model = Model((2, 2))
    state = next(s for s in model.next_decisions(model.initial(1)) if s.phase == DRAW)
    (value, action), (old_value, old_action) = (
        tables.lookup((2, 2), state) for tables in (again, shipped)
    )
    assert action == old_action and abs(value - old_value) < 1e-12


def test_compiled_counting_plays_the_counting_bots_wild():
    """On keys that keep the card under the discard top (the pile's top mid-turn), the
    compiled ``counting`` move is the bot's at every wild decision of random engine games."""
    sizes = (3, 3)
    model = Model(sizes)
    packing = Packing.of(model, pile_top=True)
    rng = np.random.default_rng(0)
    checked = differs_from_greedy = 0
    for seed in range(300):
        game = round_game(sizes, Rules(episode="round"), seed, seed % 2)
        while not game.done:
            legal = game.legal_actions()
            if int(game.decision) == WILD:
                flat = fields(model, from_game(game, sizes))
                flat[-1] = model.classes.of(game.discard[-1]) if game.discard else -1
                mask = np.zeros(13, dtype=bool)
                mask[legal] = True
                wanted = CountingAgent().act(None, mask, PublicView(game, game.current))
                found = compiled.counting_action(*packing.rules[:4], flat)
                assert found == wanted
                checked += 1
                differs_from_greedy += wanted != max(legal)
            game.step(int(rng.choice(legal)))
    assert checked > 100 and differs_from_greedy > 10
