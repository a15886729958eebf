"""The per-size evaluation (agents/evaluation/sizes.py, ``evaluate.py --sizes``): one row per
setting,
each really played in its setting, the agent's seat counted alone, the reference on the same
deals, the targets checked, bad flags refused."""

from __future__ import annotations

import csv
import json

import pytest

from agents.bots.heuristics import GreedyAgent
from agents.evaluation import cli, evaluate
from agents.evaluation.sizes import agent_figures, evaluate_sizes, settings
from trash_env.rules import Rules


class SpyAgent(GreedyAgent):
    """Greedy, recording the rules and the layout sizes of every decision it sees."""

    name = "spy"
    seen: list[tuple[Rules, tuple[int, ...]]] = []

    def act(self, observation, action_mask, view):
        SpyAgent.seen.append((view.rules, tuple(view.sizes)))
        return super().act(observation, action_mask, view)


@pytest.fixture(autouse=True)
def spy_registered(monkeypatch):
    """``spy_sizes`` is a spec during these tests only (the registry is global)."""
    import trash_env.agent

    monkeypatch.setitem(trash_env.agent._FACTORIES, "spy_sizes", (SpyAgent, {}))


def test_the_rows_are_the_whole_game_then_each_start_size():
    rows = settings(Rules())
    assert [(e, s) for e, s, _ in rows] == [("game", 10)] + [("round", s) for s in range(1, 11)]
    for episode, size, rules in rows:
        assert (rules.episode, rules.start_size) == (episode, size)
    assert [s for _, s, _ in settings(Rules(target_size=4))][1:] == [5, 6, 7, 8, 9, 10]
    assert [(e, s) for e, s, _ in settings(Rules(num_players=3), [2, 9])] == [
        ("game", 10),
        ("round", 2),
        ("round", 9),
    ]
    assert [(e, s) for e, s, _ in settings(Rules(), [4], whole_game=False)] == [("round", 4)]


def test_each_row_is_played_at_its_start_size_and_episode_kind():
    SpyAgent.seen.clear()
    report = evaluate_sizes(
        "spy_sizes", ["random"], Rules(), sizes=[1, 4, 10], deals=3, reference=None
    )
    assert [(r.episode, r.start_size) for r in report.rows] == [
        ("game", 10),
        ("round", 1),
        ("round", 4),
        ("round", 10),
    ]
    by_rules: dict[Rules, list[tuple[int, ...]]] = {}
    for rules, sizes in SpyAgent.seen:
        by_rules.setdefault(rules, []).append(sizes)
    assert set(by_rules) == {row.rules for row in report.rows}
    for row in report.rows:
        sizes = by_rules[row.rules]
        if row.episode == "round":  # one deal: every layout stays at the start size
            assert row.rules.episode == "round"
            assert set(sizes) == {(row.start_size, row.start_size)}
        else:  # whole games: layouts shrink below the start size as rounds are won
            assert row.rules.episode == "game" and sizes[0] == (10, 10)
            assert min(min(s) for s in sizes) < 10
        cell = row.cells["random"]
        assert cell["games"] == 6  # 3 duplicate deals x 2 seatings
        assert cell["ci95"][0] <= cell["win_rate"] <= cell["ci95"][1]


def test_the_reference_plays_the_same_deals_and_the_targets_are_checked():
    report = evaluate_sizes("counting", ["greedy", "random"], sizes=[5], deals=4, seed=3)
    row = report.rows[1]
    assert set(row.cells) == {"greedy", "random"} and set(row.reference) == {"random"}
    alone = evaluate(["greedy", "random"], row.rules, deals=4, seed=3)
    assert row.reference["random"] == agent_figures(alone, "greedy")
    assert row.reference["random"]["games"] == alone.agents["greedy"]["games"] == 8
    assert row.checks == {
        "vs greedy reaches par": row.cells["greedy"]["ci95"][1] >= 0.5,
        "vs random reaches greedy": (
            row.cells["random"]["ci95"][1] >= row.reference["random"]["win_rate"]
        ),
    }
    table = report.table()
    assert "round, size 5" in table and "greedy vs random" in table


def test_with_three_players_only_the_agents_single_seat_counts():
    report = evaluate(
        ["counting", "greedy"],
        Rules(num_players=3, episode="round", start_size=3),
        deals=3,
        seed=1,
        keep_results=True,
    )
    mine = [r for r in report.results if r.seats.count("counting") == 1]
    assert len(report.results) == 18 and len(mine) == 9
    wins = sum(1 / len(r.winners) for r in mine if r.seats.index("counting") in r.winners)
    figures = agent_figures(report, "counting")
    assert figures["games"] == 9 and figures["wins"] == pytest.approx(wins)
    sizes = evaluate_sizes(
        "counting", ["greedy"], Rules(num_players=3), sizes=[3], deals=3, seed=1, whole_game=False
    )
    assert sizes.par == pytest.approx(1 / 3)
    assert sizes.rows[0].cells["greedy"] == figures


def test_the_command_writes_the_table_json_and_csv(tmp_path, capsys):
    out_json, out_csv = tmp_path / "s.json", tmp_path / "s.csv"
    code = cli.main(
        [
            "--agents",
            "counting",
            "greedy",
            "random",
            "--sizes",
            "2",
            "7",
            "--deals",
            "2",
            "--seed",
            "5",
            "--no-progress",
            "--json",
            str(out_json),
            "--csv",
            str(out_csv),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "counting: 2 players, 2 duplicate deals per setting, seed 5" in printed
    assert [line.split("  ")[0] for line in printed.splitlines()[2:]] == [
        "whole game (10)",
        "round, size 2",
        "round, size 7",
    ]
    data = json.loads(out_json.read_text())
    assert data["format"] == "trash_env.evaluate_sizes/1" and data["reference"] == "greedy"
    assert [(r["episode"], r["start_size"]) for r in data["rows"]] == [
        ("game", 10),
        ("round", 2),
        ("round", 7),
    ]
    assert data["rows"][1]["rules"]["start_size"] == 2
    rows = list(csv.DictReader(out_csv.open()))
    assert [(r["start_size"], r["player"], r["opponent"]) for r in rows[:3]] == [
        ("10", "counting", "greedy"),
        ("10", "counting", "random"),
        ("10", "greedy", "random"),
    ]
    assert len(rows) == 9 and all(r["games"] == "4" for r in rows)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agents", "greedy", "--sizes"], "at least two agents"),
        (["--agents", "greedy", "random", "--sizes", "0"], "from 1 to 10"),
        (["--agents", "greedy", "random", "--sizes", "11"], "from 1 to 10"),
        (["--agents", "greedy", "random", "--sizes", "3", "3"], "each start size once"),
        (["--agents", "greedy", "random", "--sizes", "--png", "x.png"], "--png"),
        (["--agents", "greedy", "random", "--sizes", "--episode", "round"], "--episode"),
        (["--agents", "greedy", "random", "--sizes", "--reference", "nobody"], "unknown agent"),
        (["--agents", "greedy", "random", "--reference", "counting"], "option of --sizes"),
        (
            ["--agents", "greedy", "random", "--sizes", "3", "--target-size", "4"],
            "start size 3 does not fit",
        ),
        (["--agents", "greedy", "greedy", "--sizes"], "its own opponent"),
        (["--agents", "greedy", "random", "random", "--sizes"], "each spec once"),
    ],
)
def test_bad_size_flags_are_refused_before_any_game(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main([*argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_bad_arguments_of_the_function_are_refused():
    with pytest.raises(ValueError, match="at least one opponent"):
        evaluate_sizes("greedy", [])
    with pytest.raises(ValueError, match="its own opponent"):
        evaluate_sizes("greedy", ["greedy"])
    with pytest.raises(ValueError, match="start size or the whole-game row"):
        settings(Rules(), [], whole_game=False)
    with pytest.raises(ValueError, match="must be a trash_env.rules.Rules"):
        evaluate_sizes("greedy", ["random"], {"num_players": 2})
