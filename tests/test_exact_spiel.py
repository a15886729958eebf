"""The public-state model as an OpenSpiel game (trash_env/exact/spiel.py): OpenSpiel's own
value iteration and expectiminimax, unchanged, agree with the project's solver to 1e-9;
get_all_states and CFR run on the finite (turn-limited) game; states save as JSON only."""

from __future__ import annotations

import copy
import json
import sys
import types

import pytest

pyspiel = pytest.importorskip("pyspiel", reason="needs open_spiel (the openspiel extra)")

import trash_env.exact.spiel  # noqa: E402,F401 - registers python_trash_exact
from trash_env.exact.graph import TERMINALS, build_graph  # noqa: E402
from trash_env.exact.model import Model  # noqa: E402
from trash_env.exact.solver import solve, start_value  # noqa: E402


def openspiel_algorithm(name: str):
    """OpenSpiel's module ``name``. value_iteration imports its LP solver (for simultaneous
    games, which this is not) and that needs cvxpy, which is not installed: an empty stand-in
    module lets it import; the algorithm itself runs unchanged."""
    lp = "open_spiel.python.algorithms.lp_solver"
    if lp not in sys.modules:
        try:
            __import__(lp)
        except ImportError:
            sys.modules[lp] = types.ModuleType(lp)
    module = __import__(f"open_spiel.python.algorithms.{name}", fromlist=["_"])
    return module


def expected(state, values) -> float:
    """The value of ``state`` from the values of decision states (chance nodes expanded)."""
    if state.is_chance_node():
        return sum(p * expected(state.child(a), values) for a, p in state.chance_outcomes())
    if state.is_terminal():
        return state.returns()[0]
    return values[str(state)]


# (1, 2) agrees too (docs/skill.md), but OpenSpiel's Python value iteration takes minutes there.
@pytest.mark.parametrize("sizes", [(1, 1)])
def test_openspiel_value_iteration_agrees_with_the_solver(sizes):
    value_iteration = openspiel_algorithm("value_iteration")
    graph = build_graph(Model(sizes))
    solution = solve(graph)
    for first in (0, 1):
        game = pyspiel.load_game(
            "python_trash_exact", {"size0": sizes[0], "size1": sizes[1], "first": first}
        )
        values = value_iteration.value_iteration(game, -1, 1e-13, cyclic_game=True)
        compared = 0
        for i, state in enumerate(graph.states):
            key = repr(state)
            if key in values:
                assert abs(values[key] - solution.values[TERMINALS + i]) < 1e-9
                compared += 1
        assert compared > len(graph.states) // 3
        rooted = expected(game.new_initial_state(), values)
        assert abs(rooted - start_value(graph, solution.values, first)) < 1e-9


def test_openspiel_expectiminimax_agrees_with_the_solver():
    expectiminimax = openspiel_algorithm("minimax").expectiminimax
    sizes = (1, 2)
    graph = build_graph(Model(sizes))
    solution = solve(graph)
    table = {repr(s): solution.values[TERMINALS + i] for i, s in enumerate(graph.states)}

    def value(state):
        if state.is_terminal():
            return state.returns()[0]
        return expected(state, table)  # the depth may run out at a chance node

    for first in (0, 1):
        game = pyspiel.load_game("python_trash_exact", {"size0": 1, "size1": 2, "first": first})
        found, _ = expectiminimax(game.new_initial_state(), 3, value, 0)
        assert abs(found - start_value(graph, solution.values, first)) < 1e-9


def test_get_all_states_cfr_and_full_depth_search_on_the_turn_limited_game():
    get_all_states = openspiel_algorithm("get_all_states")
    cfr = openspiel_algorithm("cfr")
    expectiminimax = openspiel_algorithm("minimax").expectiminimax
    value_iteration = openspiel_algorithm("value_iteration")
    game = pyspiel.load_game("python_trash_exact", {"max_turns": 3})
    states = get_all_states.get_all_states(game, -1, True, True)
    assert any(s.is_chance_node() for s in states.values())
    assert any(s.is_terminal() and s.returns() == [0.0, 0.0] for s in states.values())
    solver = cfr.CFRSolver(game)
    for _ in range(3):
        solver.evaluate_and_update_policy()
    assert solver.average_policy() is not None
    full, _ = expectiminimax(game.new_initial_state(), 100, None, 0)
    values = value_iteration.value_iteration(game, -1, 1e-13)
    assert abs(full - expected(game.new_initial_state(), values)) < 1e-12


def test_states_save_as_json_and_anything_else_fails_in_one_sentence():
    game = pyspiel.load_game("python_trash_exact", {"size0": 2, "size1": 2})
    state = game.new_initial_state()
    for _ in range(6):
        if state.is_terminal():
            break
        state.apply_action(state.legal_actions()[-1])
    again = game.deserialize_state(state.serialize())
    assert str(again) == str(state)
    for text, words in [
        ("\x80\x04garbage", "not JSON"),
        ('{"format": "x"}', "another format"),
        (state.serialize().replace('"size0": 2', '"size0": 1'), "other parameters"),
        (state.serialize().replace('"actions": [', '"actions": [99, '), "not legal"),
    ]:
        with pytest.raises(ValueError, match=words) as error:
            game.deserialize_state(text)
        assert "\n" not in str(error.value)


def test_bad_parameters_fail_in_one_sentence():
    with pytest.raises(ValueError, match="size0 must be an integer from 1 to 10"):
        pyspiel.load_game("python_trash_exact", {"size0": 11})


@pytest.mark.parametrize(
    "entry",
    [
        "game.deserialize_state",
        "pyspiel.Game.deserialize_state",
        "deserialize_game_and_state(str)",
        "deserialize_game_and_state(bytes)",
        "OpenSpiel's own function (__wrapped__)",
        "a pickled state read back",
    ],
)
def test_a_planted_pickle_runs_nothing_through_the_exact_game(entry, tmp_path):
    """The exact game is a text-state game: OpenSpiel's pickle form of a state, planted through
    every entry of tests/test_spiel_trust.py, is refused and runs nothing."""
    from test_spiel_trust import _ENTRIES, _openspiel_pickle_form

    marker = tmp_path / "planted"
    game = pyspiel.load_game("python_trash_exact")
    with pytest.raises(ValueError, match="python_trash"):
        _ENTRIES[entry](game, _openspiel_pickle_form(marker))
    assert not marker.exists()


def test_the_exact_games_strings_carry_its_json_and_read_back():
    game = pyspiel.load_game("python_trash_exact")
    state = game.new_initial_state()
    while not state.is_terminal() and len(state.history()) < 12:
        state.apply_action(state.legal_actions()[0])
    text = pyspiel.serialize_game_and_state(game, state)
    assert json.loads(text.split("[State]\n")[1])["actions"] == state.history()
    _, again = pyspiel.deserialize_game_and_state(text)
    assert str(again) == str(state) and again.history() == state.history()
    assert str(copy.deepcopy(state)) == str(state)
