"""The exact solver and its tables: K <= 2 solved in seconds, the values satisfy the Bellman
equations, the shipped table is what the command builds, Monte-Carlo play in the real engine
agrees with the exact values, and damaged, foreign or mismatched files fail in one sentence."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_exact_model import round_game

from trash_env.exact import tables as tables_module
from trash_env.exact.__main__ import main as exact_main
from trash_env.exact.graph import TERMINALS, build_graph
from trash_env.exact.model import Model, from_game
from trash_env.exact.solver import solve, start_value
from trash_env.exact.tables import (
    MAGIC,
    SHIPPED,
    Round,
    TableError,
    Tables,
    build,
    pairs,
    table_name,
    tables_for,
)
from trash_env.rules import Rules


@pytest.fixture(scope="module")
def k2() -> Tables:
    return build(Rules(), 2, progress=False)


def test_the_values_satisfy_the_bellman_equations():
    graph = build_graph(Model((1, 2)))
    solution = solve(graph)
    q = solution.action_values
    for node in range(TERMINALS, graph.nodes):
        lo, hi = graph.action_ptr[node], graph.action_ptr[node + 1]
        best = q[lo:hi].max() if graph.player[node] == 0 else q[lo:hi].min()
        assert abs(solution.values[node] - best) < 1e-12
    assert 0.1 < start_value(graph, solution.values, 1) < start_value(graph, solution.values, 0)
    square = build_graph(Model((1, 1)))  # symmetric: the same edge from either seat
    values = solve(square).values
    assert abs(start_value(square, values, 0) + start_value(square, values, 1)) < 1e-12


def test_the_command_builds_the_table(k2, tmp_path):
    """The command writes what :func:`build` makes (format 2); it holds the shipped table's
    states and values (tests/test_exact_compiled.py), and the shipped file still loads."""
    out = tmp_path / "k2.bin"
    assert exact_main(["build", "--max-size", "2", "--out", str(out)]) == 0
    assert out.read_bytes() == k2.to_bytes()
    shipped = Tables.load(SHIPPED / table_name(Rules(), 2), Rules())
    assert shipped.start_value((2, 2), 0) == pytest.approx(k2.start_value((2, 2), 0), abs=1e-12)


def test_mirrored_rounds_read_the_same_table(k2):
    model = Model((2, 1))
    for state in list(model.next_decisions(model.initial(0)))[:20]:
        if state.phase == 0:
            continue
        value, action = k2.lookup((2, 1), state)
        assert action in model.legal_actions(state)
    assert k2.start_value((2, 1), 0) == -k2.start_value((1, 2), 1)


def play_round(sizes, tables: Tables, seed: int, first: int) -> float:
    """One round in the real engine, both seats playing the tables; seat 0's return."""
    game = round_game(sizes, Rules(episode="round"), seed, first)
    while not game.done:
        _, action = tables.lookup(sizes, from_game(game, sizes))
        game.step(action)
    return 1.0 if game.round_results[-1] == (0,) else -1.0


@pytest.mark.parametrize("sizes", [(1, 2), (2, 1), (2, 2)])
def test_engine_play_agrees_with_the_exact_value_within_3_standard_errors(k2, sizes):
    returns = np.array([play_round(sizes, k2, seed, seed % 2) for seed in range(3000)])
    exact = (k2.start_value(sizes, 0) + k2.start_value(sizes, 1)) / 2
    error = returns.std(ddof=1) / np.sqrt(len(returns))
    assert abs(returns.mean() - exact) < 3 * error, (returns.mean(), exact, error)


def test_a_table_not_shipped_is_built_on_first_use_into_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRASH_ENV_CACHE", str(tmp_path))
    rules = Rules(wilds="kings")
    tables = tables_for(rules, 1)
    assert (tmp_path / "exact" / table_name(rules, 1)).is_file()
    assert "round (1, 1)" in capsys.readouterr().err  # the progress bar
    again = tables_for(rules, 1)
    assert again.to_bytes() == tables.to_bytes()


def one_sentence(error: pytest.ExceptionInfo) -> str:
    text = str(error.value)
    assert "\n" not in text and text.count(". ") == 0
    return text


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda b: b[:-5], "payload is truncated"),
        (lambda b: b[:30], "truncated"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum does not match"),
        (lambda b: b"PK\x03\x04" + b[4:], "magic line"),
        (lambda b: MAGIC + (5).to_bytes(8, "little") + b"{nope", "not JSON"),
    ],
)
def test_damaged_or_foreign_files_fail_in_one_sentence(k2, tmp_path, damage, words):
    path = tmp_path / "t.bin"
    path.write_bytes(damage(k2.to_bytes()))
    with pytest.raises(TableError) as error:
        Tables.load(path, Rules())
    assert words in one_sentence(error)


def rewrite_header(data: bytes, change) -> bytes:
    start = len(MAGIC) + 8
    length = int.from_bytes(data[len(MAGIC) : start], "little")
    header = json.loads(data[start : start + length])
    change(header)
    text = json.dumps(header).encode()
    return MAGIC + len(text).to_bytes(8, "little") + text + data[start + length :]


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda h: h.update(version=99), "version 99"),
        (lambda h: h.update(version=2), "older tables hold other values after a reshuffle"),
        (lambda h: h.update(format="other"), "another format"),
        (lambda h: h.update(rules={"wilds": "kings", "jokers": False}), "solved for rules"),
        (lambda h: h["rounds"][0]["arrays"]["keys"].__setitem__(1, 3), "wrong length"),
        (lambda h: h["rounds"].pop(), "every round"),
        (lambda h: h["rounds"][0].pop("states"), "lacks a field"),
    ],
)
def test_a_header_that_lies_fails_in_one_sentence(k2, tmp_path, change, words):
    path = tmp_path / "t.bin"
    path.write_bytes(rewrite_header(k2.to_bytes(), change))
    with pytest.raises(TableError) as error:
        Tables.load(path, Rules())
    assert words in one_sentence(error)


def test_a_table_of_three_slots_holds_its_rounds_in_any_order():
    """K = 3's rounds sort otherwise than they are built ((1, 3) before (2, 2)); the tiny
    stand-in rounds below are all the check reads."""
    rounds = {
        sizes: Round(sizes, np.zeros(0, np.uint64), np.zeros(0), np.zeros(0, np.int8), (0, 0))
        for sizes in pairs(3)
    }
    again = Tables.from_bytes(Tables(Rules(), 3, rounds).to_bytes(), Rules())
    assert sorted(again.rounds) == sorted(pairs(3))


def test_a_table_whose_keys_repeat_is_refused(k2):
    found = k2.rounds[(1, 1)]
    keys = found.keys.copy()
    keys[1] = keys[0]
    rounds = dict(k2.rounds)
    rounds[(1, 1)] = Round((1, 1), keys, found.values, found.actions, found.start_values)
    with pytest.raises(TableError, match="not strictly increasing") as error:
        Tables.from_bytes(Tables(Rules(), 2, rounds).to_bytes(), Rules())
    one_sentence(error)


def test_kings_wild_reads_the_jacks_tables(k2):
    """The same card classes, so the same game: the Jacks table answers for Kings wild."""
    kings = Tables.from_bytes(k2.to_bytes(), Rules(wilds="kings"))
    assert kings.start_value((2, 2), 0) == k2.start_value((2, 2), 0)
    jacks, crowned = Model((2, 2), Rules()), Model((2, 2), Rules(wilds="kings"))
    assert jacks.totals == crowned.totals


def test_a_table_for_other_rules_is_refused(k2):
    with pytest.raises(TableError, match="solved for rules") as error:
        Tables.from_bytes(k2.to_bytes(), Rules(jokers=True))
    one_sentence(error)


def test_a_size_the_tables_do_not_cover_is_refused_in_one_sentence(k2):
    model = Model((3, 1))
    state = next(iter(model.next_decisions(model.initial(0))))
    with pytest.raises(ValueError, match="up to 2 slots; this round has layouts of 3 and 1") as e:
        k2.lookup((3, 1), state)
    one_sentence(e)


def test_the_build_command_refuses_a_bad_size(capsys):
    assert exact_main(["build", "--max-size", "0", "--out", "/dev/null"]) == 2
    assert "max_size must be an integer from 1 to" in capsys.readouterr().err


def test_tables_module_names_the_objective():
    assert "the round cut off after T turns and paying 0 there" in tables_module.OBJECTIVE


def test_loaded_arrays_are_aligned_whatever_the_rounds_lengths(k2):
    """A round of 3 states leaves the next round's arrays at an odd offset of the file; numpy
    would copy such an array whole on every lookup, so loading aligns it once."""
    rounds = dict(k2.rounds)
    small = k2.rounds[(1, 1)]
    rounds[(1, 1)] = Round(
        (1, 1), small.keys[:3], small.values[:3], small.actions[:3], small.start_values
    )
    again = Tables.from_bytes(Tables(Rules(), 2, rounds).to_bytes(), Rules())
    for found in again.rounds.values():
        assert found.keys.flags.aligned and found.values.flags.aligned
    assert np.array_equal(again.rounds[(2, 2)].keys, k2.rounds[(2, 2)].keys)
