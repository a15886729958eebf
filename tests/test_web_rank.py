"""The leaderboard API: an evaluate.py report, its saved games (the contract of
``evaluate.py --save-games``: ``"games": {"dir", "index"}``) and the games' replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from web_support import serving

import agents.evaluation.cli as evaluate
from agents.bots.base import make_agent
from agents.evaluation.tournament import deal_seed
from agents.play.game_log import build_log
from trash_env.engine import Game
from trash_env.match import Match
from trash_env.rules import Rules

SPECS = ["greedy", "random"]


def saved_games(folder: Path, count: int) -> list[dict]:
    """Tournament games written in the game-log schema, as evaluate.py --save-games does."""
    folder.mkdir(parents=True)
    rules = Rules()
    index = []
    for i in range(count):
        seed, first = deal_seed(0, i, 2)
        specs = SPECS if i % 2 == 0 else SPECS[::-1]
        game = Game(
            rules, seed=seed, first_player=first
        )  # as agents.evaluation.tournament.play_game
        actions: list[tuple[int, int]] = []
        agents = [make_agent(s) for s in specs]
        Match(game, agents, on_action=lambda p, a, kept=actions: kept.append((p, a))).play()
        names = [f"{s} (seat {p + 1})" for p, s in enumerate(specs)]
        log = build_log(game, seed=seed, seat=0, specs=specs, names=names, actions=actions)
        name = f"{i:06d}.json"
        (folder / name).write_text(json.dumps(log))
        index.append(
            {"file": name, "specs": specs, "deal_seed": seed, "winners": list(game.winners)}
        )
    return index


def report_with_games(folder: Path, name: str, specs: list[str], games: int) -> dict:
    """evaluate.py's report of ``specs`` over ``games`` games, written to ``folder/name``;
    returned with four saved games (:func:`saved_games`, in ``folder/games``) linked in."""
    flags = ["--games", str(games), "--json", str(folder / name), "--quiet", "--no-progress"]
    assert evaluate.main(["--agents", *specs, *flags]) == 0
    report = json.loads((folder / name).read_text())
    report["games"] = {"dir": "games", "index": saved_games(folder / "games", 4)}
    return report


@pytest.fixture(scope="module")
def report_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("reports")
    report = report_with_games(folder, "plain.json", SPECS, 8)
    (folder / "linked.json").write_text(json.dumps(report))
    outside = dict(report, games={"dir": "/", "index": report["games"]["index"]})
    (folder / "outside.json").write_text(json.dumps(outside))
    (folder / "notes.json").write_text('{"format": "something else"}')
    return folder


def test_a_report_opens_as_a_leaderboard(tmp_path, report_folder):
    with serving(tmp_path / "logs", report_folder) as (client, _):
        names = [f["name"] for f in client.get("/api/reports")["reports"]]
        assert {"plain.json", "linked.json", "notes.json"} <= set(names)
        board = client.get("/api/reports/plain.json")
        assert [a["spec"] for a in board["agents"]] == SPECS
        for a in board["agents"]:
            assert 0 <= a["ci95"][0] <= a["win_rate"] <= a["ci95"][1] <= 1
        assert {(p["agent"], p["opponent"]) for p in board["pairs"]} == {
            ("greedy", "random"),
            ("random", "greedy"),
        }
        assert board["saved"] is None and board["par"] == 0.5
        status, answer = client.request("GET", "/api/reports/notes.json")
        assert status == 400 and "not an evaluate.py report" in answer["error"]


def test_the_leaderboard_ranks_as_the_cli_does_ties_included(tmp_path, report_folder):
    """The CLI prints ``1=`` for ratings that cannot be told apart; the page gets the same
    rank and tie for every agent (it numbered them 1, 2, 3 by win rate before)."""
    report = json.loads((report_folder / "plain.json").read_text())
    tied = dict(report)
    tied["agents"] = {
        spec: dict(a, rating=dict(a["rating"], mu=25.0 + 0.1 * k, sigma=3.0))
        for k, (spec, a) in enumerate(report["agents"].items())
    }
    (tmp_path / "tied.json").write_text(json.dumps(tied))
    (tmp_path / "plain.json").write_text(json.dumps(report))
    with serving(tmp_path / "logs", tmp_path) as (client, _):
        cli = client.get("/api/reports/plain.json")["agents"]
        assert [(a["rank"], a["tied"]) for a in cli] == [
            (
                report["agents"][a["spec"]]["rating"]["rank"],
                report["agents"][a["spec"]]["rating"]["tied"],
            )
            for a in cli
        ]
        board = client.get("/api/reports/tied.json")["agents"]
    assert [(a["rank"], a["tied"]) for a in board] == [(1, True), (1, True)]


def test_saved_games_are_linked_and_replay(tmp_path, report_folder):
    with serving(tmp_path / "logs", report_folder) as (client, _):
        board = client.get("/api/reports/linked.json")
        assert board["saved"]["found"] and len(board["saved"]["index"]) == 4
        for entry in board["saved"]["index"]:
            game = client.get(f"/api/reports/linked.json/games/{entry['file']}")
            # The tournament set the first seat: the replay still reproduces every event.
            assert game["note"] is None and game["frames"][-1]["done"]
            assert game["winners"] == entry["winners"]
        status, _ = client.request("GET", "/api/reports/linked.json/games/000099.json")
        assert status == 404
        status, _ = client.request("GET", "/api/reports/linked.json/games/..%2Fplain.json")
        assert status == 404


def test_saved_games_outside_the_folders_are_not_served(tmp_path, report_folder):
    with serving(tmp_path / "logs", report_folder) as (client, _):
        board = client.get("/api/reports/outside.json")
        assert board["saved"]["found"] is False
        status, answer = client.request("GET", "/api/reports/outside.json/games/000000.json")
        assert status == 404 and "no such saved game" in answer["error"]


@pytest.mark.parametrize(
    "change, words",
    [
        ({"agents_order": "greedy"}, "agents_order"),
        ({"agents": {}}, "is missing"),
        ({"rules": {"wilds": "aces"}}, "rules"),
        (
            {
                "pairs": {
                    "x": {
                        "agent": "nobody",
                        "opponent": "greedy",
                        "rate": 0.5,
                        "ci95": [0, 1],
                        "comparisons": 1,
                    }
                }
            },
            "not in agents_order",
        ),
        (
            {
                "games": {
                    "dir": "games",
                    "index": [{"file": "../x.json", "specs": [], "winners": []}],
                }
            },
            "file",
        ),
    ],
)
def test_broken_reports_get_a_reason(tmp_path, report_folder, change, words):
    report = json.loads((report_folder / "plain.json").read_text()) | change
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "r.json").write_text(json.dumps(report))
    with serving(tmp_path / "logs", folder) as (client, _):
        status, answer = client.request("GET", "/api/reports/r.json")
        assert status == 400 and words in answer["error"], answer
