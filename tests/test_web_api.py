"""The web table's JSON API: a whole game against bots, its log and replay, and bad requests."""

from __future__ import annotations

import fnmatch
import json
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from web_support import play_out, serving

from agents.play.game_log import read_log
from trash_env.engine import Game
from trash_env.rules import Rules


def first_legal(state: dict) -> int:
    return state["legal"][0]


@pytest.mark.parametrize(
    "options",
    [
        dict(players=2, rules={}),
        dict(players=3, rules={"wilds": "kings", "jokers": True}),
        dict(players=2, rules={"call_trash": True, "losers_reveal": True, "free_draws": 3}),
        dict(players=4, rules={"start_size": 5, "episode": "round"}),
    ],
)
def test_a_whole_game_is_logged_and_replays(web, options):
    client, config = web
    rng = np.random.default_rng(0)
    state = client.post("/api/games", {"opponents": ["greedy"], "seat": 2, "seed": 7, **options})
    assert state["seat"] == 1 and state["names"][1] == "You"
    final = play_out(client, state, lambda s: int(rng.choice(s["legal"])))
    assert final["log"] is not None
    log = read_log(config.logs / final["log"])
    assert log["finished"] and log["seat"] == 1 and log["agents"][1] == "human"
    # The logged actions on the engine reproduce the game the page was shown.
    game = Game(Rules.from_options(**log["rules"]), seed=log["seed"])
    for player, action in log["actions"]:
        assert game.current == player
        game.step(action)
    assert [list(e) for e in game.events] == [e[:4] for e in final["events"]]
    assert list(game.winners) == final["winners"] and game.done
    replay = client.get(f"/api/logs/{final['log']}")
    assert replay["note"] is None and len(replay["frames"]) == len(log["actions"]) + 1
    assert replay["frames"][-1]["done"] and replay["winners"] == final["winners"]
    listed = client.get("/api/logs")["logs"]
    assert [f["name"] for f in listed] == [final["log"]]


def test_call_trash_is_the_persons_own(web):
    client, _ = web
    state = client.post(
        "/api/games", {"opponents": ["random"], "seed": 3, "rules": {"call_trash": True}}
    )
    seen_call = False
    for _ in range(5000):
        if state["done"]:
            break
        if state["legal"]:
            if state["decision"] == "call":
                assert state["legal"] == [13, 14]
                seen_call = True
            state = client.post(f"/api/games/{state['id']}/act", {"action": state["legal"][0]})
        else:
            state = client.post(f"/api/games/{state['id']}/step", {"since": 10**6})
    assert seen_call


def test_leaving_writes_an_unfinished_log(web):
    client, config = web
    state = client.post("/api/games", {"opponents": ["greedy", "counting"], "seed": 1})
    left = client.post(f"/api/games/{state['id']}/leave")
    log = read_log(config.logs / left["log"])
    assert not log["finished"] and log["agents"][1:] == ["greedy", "counting"]
    status, answer = client.request("GET", f"/api/games/{state['id']}")
    assert status == 404 and "no such game" in answer["error"]


@pytest.mark.parametrize(
    "body, words",
    [
        ({"opponents": ["human"]}, "bots only"),
        ({"opponents": ["nobody"]}, "unknown agent"),
        ({"opponents": ["../x.safetensors"]}, "is a path"),
        ({"opponents": ["/etc/passwd"]}, "is a path"),
        ({"opponents": ["m.safetensors"]}, "--models"),
        ({"opponents": ["x.zip"]}, "zip"),
        ({"opponents": ["search:rollouts=1000000"]}, "at most 2000"),
        ({"opponents": ["search:rollouts=x"]}, "rollouts must be int"),
        ({"opponents": []}, "opponents must be"),
        ({"opponents": ["greedy"] * 6}, "opponents must be"),
        ({"players": 7}, "players must be"),
        ({"players": True}, "players must be"),
        ({"players": 3, "opponents": ["greedy", "greedy", "greedy"]}, "needs 2"),
        ({"seat": 3}, "seat must be"),
        ({"seed": -1}, "seed must be"),
        ({"rules": {"wilds": "aces"}}, "wilds must be one of"),
        ({"rules": {"colour": 1}}, "unknown rules option"),
        ({"rules": {"num_players": 3}}, "players"),
        ({"rules": []}, "rules must be"),
        ({"colour": "red"}, "unknown field"),
        ([1, 2], "JSON object"),
    ],
)
def test_bad_new_games_get_one_line_reasons(web, body, words):
    client, _ = web
    status, answer = client.request("POST", "/api/games", body)
    assert status == 400, answer
    assert words in answer["error"] and "\n" not in answer["error"]


def test_bad_moves_and_requests(web):
    client, _ = web
    state = client.post("/api/games", {"opponents": ["greedy"], "seed": 0})
    while not state["legal"]:
        state = client.post(f"/api/games/{state['id']}/step")
    game = state["id"]
    for action in (99, -1, True, "10", None, 1.5):
        status, answer = client.request("POST", f"/api/games/{game}/act", {"action": action})
        assert status == 400 and "legal actions" in answer["error"], (action, answer)
    status, answer = client.request("POST", f"/api/games/{game}/act", raw=b"{not json")
    assert status == 400 and "JSON" in answer["error"]
    status, answer = client.request("POST", f"/api/games/{game}/act", raw=b" " * (64 * 1024 + 1))
    assert status == 413
    status, answer = client.request("GET", f"/api/games/{game}?since=-3")
    assert status == 400 and "since" in answer["error"]
    assert client.post(f"/api/games/{game}/step")["legal"] == state["legal"]  # not a bot's turn
    for path in (
        "/api/nothing",
        "/nothing",
        "/static/../server.py",
        "/static/app.py",
        "/api/games/nope",
    ):
        status, answer = client.request("GET", path)
        assert status == 404, path


@pytest.mark.parametrize(
    "name",
    [
        "../secret.json",
        "..%2Fsecret.json",
        "%2E%2E%2Fsecret.json",
        ".hidden.json",
        "a/b.json",
        "secret",
        "link.json",
        "%00.json",
    ],
)
def test_files_outside_the_folders_are_refused(web, tmp_path, name):
    client, config = web
    (tmp_path / "secret.json").write_text(json.dumps({"format": "trash_env.play/1"}))
    config.logs.mkdir(exist_ok=True)
    (config.logs / "link.json").symlink_to(tmp_path / "secret.json")
    for route in ("logs", "reports"):
        status, answer = client.request("GET", f"/api/{route}/{name}")
        assert status in (400, 404), (route, name, answer)
        assert "error" in answer
    assert "link.json" not in [f["name"] for f in client.get("/api/logs")["logs"]]


def test_a_log_that_is_not_one_gets_a_reason(web):
    client, config = web
    config.logs.mkdir(exist_ok=True)
    (config.logs / "bad.json").write_text('{"format": "trash_env.play/1", "seat": 0}')
    status, answer = client.request("GET", "/api/logs/bad.json")
    assert status == 400 and "not a valid game log" in answer["error"]


def test_options_list_bots_rules_and_models(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "mine.safetensors").write_bytes(b"")
    with serving(tmp_path / "logs", models=models) as (client, _):
        options = client.get("/api/options")
        assert "greedy" in options["bots"] and "pretrained" in options["bots"]
        assert options["models"] == ["mine.safetensors"]
        names = {r["name"] for r in options["rules"]}
        assert {"wilds", "call_trash", "episode"} <= names
        status, answer = client.request("POST", "/api/games", {"opponents": ["mine.safetensors"]})
        assert status == 400 and "error" in answer  # an empty file is no model


def test_the_page_and_its_files_are_served(web):
    client, _ = web
    for path, kind in (
        ("/", "text/html"),
        ("/static/app.js", "text/javascript"),
        ("/static/app.css", "text/css"),
        ("/static/table.js", "text/javascript"),
        ("/static/play.js", "text/javascript"),
        ("/static/watch.js", "text/javascript"),
        ("/static/rank.js", "text/javascript"),
    ):
        with urllib.request.urlopen(client.base + path, timeout=30) as answer:
            assert answer.headers["Content-Type"].startswith(kind)
            assert "default-src 'self'" in answer.headers["Content-Security-Policy"]
            body = answer.read().decode()
            assert "http://" not in body and "https://" not in body  # nothing from outside


def test_the_package_data_ships_every_page_file():
    """pyproject's package-data names every file of agents/web/static (else an installed
    trash-env would serve a page without its scripts)."""
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["agents.web"]
    assert "agents.web" in project["tool"]["setuptools"]["packages"]
    assert project["project"]["scripts"]["trash-web"] == "agents.web.__main__:main"
    files = sorted(
        p.relative_to(root / "agents" / "web").as_posix()
        for p in (root / "agents" / "web" / "static").iterdir()
    )
    assert files and all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), files


def test_a_log_that_does_not_replay_shows_its_events(web):
    """Without a seed, or with actions that do not give its events, a log is still watched:
    its events alone, with a note saying why."""
    client, config = web
    state = client.post("/api/games", {"opponents": ["greedy"], "seed": 9})
    log = read_log(config.logs / play_out(client, state, first_legal)["log"])
    no_seed = dict(log, seed=None)
    other = dict(log, seed=10)
    (config.logs / "noseed.json").write_text(json.dumps(no_seed))
    (config.logs / "other.json").write_text(json.dumps(other))
    for name, words in (("noseed.json", "no seed"), ("other.json", "do not replay")):
        replay = client.get(f"/api/logs/{name}")
        assert replay["frames"] is None and words in replay["note"]
        assert replay["winners"] is None and replay["finished"] is None
        assert [e[:4] for e in replay["events"]] == log["events"]


def test_a_model_file_of_the_models_folder_plays(tmp_path):
    """A model in --models is an opponent by its file name; the log keeps that name."""
    models = tmp_path / "models"
    models.mkdir()
    shipped = Path(__file__).resolve().parent.parent / "agents" / "policies" / "models"
    for suffix in (".safetensors", ".json"):
        (models / f"mine{suffix}").write_bytes((shipped / f"pretrained_2p{suffix}").read_bytes())
    with serving(tmp_path / "logs", models=models) as (client, config):
        state = client.post("/api/games", {"opponents": ["mine.safetensors"], "seed": 1})
        assert state["names"][1] == "mine (seat 2)"
        for _ in range(20):
            if state["legal"]:
                state = client.post(f"/api/games/{state['id']}/act", {"action": state["legal"][0]})
            else:
                state = client.post(f"/api/games/{state['id']}/step")
        log = read_log(config.logs / client.post(f"/api/games/{state['id']}/leave")["log"])
        assert log["agents"] == ["human", "mine.safetensors"]
        assert any(player == 1 for player, _ in log["actions"])
