"""One seat (``evaluate.py --one-seat``, ``evaluate(..., one_seat=True)``): the first agent once
against copies of the second, each seat in turn over duplicate deals, reported as its share
against par with its interval: the figure every learning target is judged by. It plays only that
line-up, and its games are those of the same line-up in the full tournament."""

from __future__ import annotations

import json

import pytest

from agents.evaluation import cli, evaluate, lineups
from agents.evaluation.sizes import agent_figures
from trash_env.rules import Rules

SHORT = Rules(num_players=3, episode="round", start_size=3)


def test_one_seat_is_the_one_line_up_of_the_first_spec_once():
    assert lineups(["a", "b"], 4, one_seat=True) == [("a", "b", "b", "b")]
    assert lineups(["a", "b"], 2, one_seat=True) == [("a", "b")]
    for specs in (["a"], ["a", "b", "c"]):
        with pytest.raises(ValueError, match="exactly two agent specs"):
            lineups(specs, 3, one_seat=True)


def test_the_agent_holds_each_seat_once_per_deal_and_the_games_are_the_full_tournaments():
    one = evaluate(["counting", "greedy"], SHORT, deals=4, seed=7, one_seat=True, keep_results=True)
    assert one.games == 12 and one.lineups == [("counting", "greedy", "greedy")]
    for deal in range(4):
        seats = [r.seats.index("counting") for r in one.results if r.deal == deal]
        assert sorted(seats) == [0, 1, 2]
    assert all(r.seats.count("counting") == 1 for r in one.results)
    # Both bots are deterministic: the one-seat games are the full tournament's one-seat games.
    full = evaluate(["counting", "greedy"], SHORT, deals=4, seed=7)
    assert full.games == 24
    figures = one.one_seat
    assert figures is not None
    assert {k: figures[k] for k in ("games", "wins", "win_rate", "ci95")} == agent_figures(
        full, "counting"
    )
    assert figures["agent"] == "counting" and figures["opponent"] == "greedy"
    assert figures["par"] == pytest.approx(1 / 3)
    assert figures["reaches_par"] == (figures["ci95"][1] >= 1 / 3)


def test_the_share_is_judged_against_par_both_ways():
    rules = Rules(num_players=4, episode="round", start_size=4)
    weak = evaluate(["random", "greedy"], rules, deals=30, seed=2, one_seat=True).one_seat
    strong = evaluate(["greedy", "random"], rules, deals=30, seed=2, one_seat=True).one_seat
    assert weak is not None and strong is not None
    assert weak["games"] == strong["games"] == 120
    assert weak["ci95"][1] < 0.25 and not weak["reaches_par"]
    assert strong["ci95"][0] > 0.25 and strong["reaches_par"]


def test_a_tournament_without_one_seat_has_no_such_figure():
    report = evaluate(["counting", "greedy"], SHORT, deals=2, seed=1)
    assert report.one_seat is None and "one_seat" not in report.to_json()
    assert "one seat:" not in report.table()


def test_the_command_prints_and_writes_the_share_against_par(tmp_path, capsys):
    out = tmp_path / "one.json"
    argv = ["--agents", "random", "greedy", "--players", "4", "--episode", "round"]
    argv += ["--start-size", "4", "--deals", "30", "--seed", "2", "--one-seat", "--no-progress"]
    assert cli.main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("one seat:"))
    assert "random against 3 x greedy" in line and "over 120 games" in line
    assert "par 0.250 (the interval below par)" in line
    data = json.loads(out.read_text())
    assert data["lineups"] == [["random", "greedy", "greedy", "greedy"]] and data["games"] == 120
    assert data["one_seat"]["games"] == 120 and data["one_seat"]["reaches_par"] is False


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "greedy", "--one-seat"], "give exactly two agents, got 1"),
        (["--agents", "greedy", "random", "counting", "--one-seat"], "exactly two agents, got 3"),
        (["--agents", "greedy", "random", "--sizes", "--one-seat"], "leave out --one-seat"),
    ],
)
def test_the_command_refuses_one_seat_without_exactly_two_agents(argv, message, capsys):
    assert cli.main([*argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_refuses_a_one_seat_that_is_not_a_bool():
    with pytest.raises(ValueError, match="one_seat must be True or False"):
        evaluate(["greedy", "random"], SHORT, deals=1, one_seat="yes")  # type: ignore[arg-type]
