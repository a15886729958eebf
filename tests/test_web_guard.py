"""The web table against other sites and hostile numbers (issue 28, items 4-6): cross-site
requests refused, nothing evicted or logged by them, numbers parsed strictly before anything is
applied, a bot move bounded in time, keep-alive, every error one line of JSON with the security
headers, and agents that cannot play a game refused when it is created."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from pathlib import Path

import pytest
from web_support import TIMEOUT, serving

import agents.web.server as server_module
from agents.web.server import Config, make_server
from trash_env.engine import EVENT_KINDS, Decision
from trash_env.rules import Rules

SHIPPED = Path(__file__).resolve().parent.parent / "agents" / "policies" / "models"


def raw_post(client, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", client.port, timeout=TIMEOUT)
    try:
        connection.request("POST", path, body=body, headers=headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def move(client, state: dict) -> tuple[int, dict]:
    """One request of the game: the person's first legal action, or a bot's move."""
    if state["legal"]:
        return client.request(
            "POST", f"/api/games/{state['id']}/act", {"action": state["legal"][0]}
        )
    return client.request("POST", f"/api/games/{state['id']}/step", {})


def logs_in(config: Config) -> list[Path]:
    return sorted(config.logs.glob("*.json")) if config.logs.is_dir() else []


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"Content-Type": "text/plain"}, 415),
        ({}, 415),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403),
        ({"Content-Type": "application/json", "Origin": "null"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403),
        ({"Content-Type": "text/plain", "Origin": "http://evil.example"}, 403),
    ],
)
def test_state_changing_requests_from_other_sites_are_refused(web, headers, status):
    client, config = web
    before = len(config.tables)
    code, answer = raw_post(client, "/api/games", b'{"seed": 1}', headers)
    assert code == status and "error" in answer, answer
    assert len(config.tables) == before  # nothing was created


def test_the_pages_own_requests_are_served(web):
    client, _ = web
    own = f"http://127.0.0.1:{client.port}"
    for extra in ({"Origin": own, "Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}):
        code, answer = raw_post(
            client, "/api/games", b'{"seed": 1}', {"Content-Type": "application/json", **extra}
        )
        assert code == 200 and answer["seat"] == 0, answer


def test_an_outside_page_can_neither_evict_a_game_nor_write_logs(web):
    """300 posts from another site (issue 28: 16 evicted a live game, 300 left 296 logs)."""
    client, config = web
    state = client.post("/api/games", {"seed": 4})
    for _ in range(300):
        code, _answer = raw_post(
            client,
            "/api/games",
            b"{}",
            {"Content-Type": "text/plain", "Origin": "http://evil.example"},
        )
        assert code == 403
    assert client.get(f"/api/games/{state['id']}")["id"] == state["id"]
    assert logs_in(config) == []


def test_the_least_recently_used_game_is_left_and_only_a_played_one_is_logged(web, monkeypatch):
    client, config = web
    monkeypatch.setattr(server_module, "MAX_TABLES", 3)
    played = client.post("/api/games", {"seed": 1, "seat": 1})
    while not any(p == 0 for p, _ in config.tables[played["id"]].actions):
        played = move(client, played)[1]
    idle = [client.post("/api/games", {"seed": s})["id"] for s in (2, 3)]
    client.get(f"/api/games/{played['id']}")  # used again: the idle ones go first
    for seed in range(4, 6):
        client.post("/api/games", {"seed": seed})
    assert played["id"] in config.tables and not set(idle) & set(config.tables)
    assert logs_in(config) == []  # nobody moved in the idle games: no file
    for seed in range(6, 8):
        client.post("/api/games", {"seed": seed})
    assert played["id"] not in config.tables
    (log,) = logs_in(config)  # the played game, left and logged
    assert "seed1" in log.name


@pytest.mark.parametrize(
    "spec",
    [
        "search:rollouts=+3000000",
        "search:rollouts=3_000_000",
        "search:rollouts= 3000000 ",
        "search:rollouts=3000000.0",
        "search:rollouts=3e6",
        "search:rollouts=NaN",
        "search:rollouts=2001",
        "search:z=nan",
        "search:z=inf",
    ],
)
def test_the_search_budget_is_capped_on_the_parsed_number(web, spec):
    client, _ = web
    status, answer = client.request("POST", "/api/games", {"opponents": [spec]})
    assert status == 400, answer
    error = answer["error"]
    assert ("at most 2000" in error) or ("plain digits" in error), error
    assert "\n" not in error


def test_a_move_with_a_bad_since_is_refused_before_it_is_applied(web):
    client, _ = web
    state = client.post("/api/games", {"seed": 2, "seat": 1})
    assert state["legal"]
    for since in ("abc", -1, 1.5, True, "1e3", " 3", "٣"):
        status, answer = client.request(
            "POST", f"/api/games/{state['id']}/act", {"action": state["legal"][0], "since": since}
        )
        assert status == 400 and "since" in answer["error"], (since, answer)
    after = client.get(f"/api/games/{state['id']}")
    assert after["event_count"] == state["event_count"] and after["legal"] == state["legal"]


@pytest.mark.parametrize("raw", [b'{"seed": NaN}', b'{"seed": Infinity}', b'{"seed": -Infinity}'])
def test_a_nan_seed_is_refused(web, raw):
    client, config = web
    status, answer = client.request("POST", "/api/games", raw=raw)
    assert status == 400 and "NaN" in answer["error"], answer
    assert not config.tables


@pytest.mark.parametrize("seed", [1.5, 7.0, "7", True, 2**63])
def test_a_seed_that_is_not_a_whole_number_is_refused(web, seed):
    client, _ = web
    status, answer = client.request("POST", "/api/games", {"seed": seed})
    assert status == 400 and "seed must be" in answer["error"], answer


def test_a_bot_move_past_its_time_bound_stops_the_game_and_its_thread(tmp_path):
    config = Config(logs=tmp_path / "logs", bot_seconds=0.05)
    with serving(config=config) as (client, config):
        state = client.post(
            "/api/games",
            {"players": 6, "seat": 6, "seed": 3, "opponents": ["search:rollouts=2000"]},
        )
        for _ in range(500):  # the first bot decision that needs a search runs past 0.05 s
            status, answer = move(client, state)
            if status != 200:
                break
            state = answer
        assert status == 503 and "took more than 0.05 s" in answer["error"], answer
        (log,) = logs_in(config)  # the stopped game was logged
        assert "seed3" in log.name
        status, answer = client.request("POST", f"/api/games/{state['id']}/step", {})
        assert status == 404
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            t.name == "trash-web-bot" for t in threading.enumerate()
        ):
            time.sleep(0.02)
        assert not [t for t in threading.enumerate() if t.name == "trash-web-bot"]


def test_keep_alive_one_connection_many_answers(web):
    client, _ = web
    connection = http.client.HTTPConnection("127.0.0.1", client.port, timeout=TIMEOUT)
    try:
        connection.request(
            "POST", "/api/games", body=b'{"seed": 8}', headers={"Content-Type": "application/json"}
        )
        answer = connection.getresponse()
        assert answer.version == 11 and answer.status == 200
        game = json.loads(answer.read())["id"]
        first = connection.sock
        for path in (f"/api/games/{game}", "/api/options", f"/api/games/{game}"):
            connection.request("GET", path)
            answer = connection.getresponse()
            assert int(answer.headers["Content-Length"]) == len(answer.read())
            assert connection.sock is first  # the same connection throughout
    finally:
        connection.close()


def test_the_listen_queue_holds_200_players(tmp_path):
    server = make_server(Config(logs=tmp_path), "127.0.0.1", 0)
    try:
        assert server.request_queue_size >= 200
    finally:
        server.server_close()


def _raw(port: int, data: bytes) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return lines[0], headers, body


@pytest.mark.parametrize(
    "data, status",
    [
        (b"BREW / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
        (b"OPTIONS /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"".join(b"X%d: 1\r\n" % k for k in range(120)) + b"\r\n", 431),
        (b"GET / HTTP/9.9\r\n\r\n", 505),
        (b"nonsense\r\n\r\n", 400),
        (b"GET /" + b"a" * 3000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414),
    ],
)
def test_every_error_is_one_line_of_json_with_the_security_headers(web, data, status):
    client, _ = web
    first, headers, body = _raw(client.port, data)
    assert f" {status} " in first + " ", first
    assert headers["Content-Type"] == "application/json"
    assert int(headers["Content-Length"]) == len(body)
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert b"\n" not in body and json.loads(body)["error"]


def test_options_name_folders_without_absolute_paths_and_give_the_pages_lists(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    config = Config(logs=tmp_path / "logs", reports=Path("reports"), models=Path("/nowhere/mine"))
    with serving(config=config) as (client, _):
        options = client.get("/api/options")
    assert options["logs"] == "logs" and options["reports"] == "reports"
    assert options["models_folder"] == "mine"
    assert str(tmp_path) not in json.dumps(options)
    assert options["decisions"] == [d.name.lower() for d in Decision]
    assert options["event_kinds"] == list(EVENT_KINDS)


def test_train_py_run_folders_are_models_by_their_run_name(tmp_path):
    models = tmp_path / "runs"
    for run in ("alpha", "beta"):
        (models / run / "model_pool").mkdir(parents=True)
        for suffix in (".safetensors", ".json"):
            data = (SHIPPED / f"pretrained_2p{suffix}").read_bytes()
            (models / run / f"model{suffix}").write_bytes(data)
            (models / run / "model_pool" / f"snapshot_000000000{suffix}").write_bytes(data)
    with serving(tmp_path / "logs", models=models) as (client, config):
        assert client.get("/api/options")["models"] == ["alpha.safetensors", "beta.safetensors"]
        state = client.post("/api/games", {"opponents": ["beta.safetensors"], "seed": 1})
        assert state["names"][1] == "beta (seat 2)" and state["agents"][1] == "beta.safetensors"
        for name in ("model.safetensors", "model_pool.safetensors", "gamma.safetensors"):
            status, answer = client.request("POST", "/api/games", {"opponents": [name]})
            assert status == 400 and "no model" in answer["error"], (name, answer)


@pytest.mark.parametrize(
    "body, words",
    [
        ({"opponents": ["pretrained_3p"], "players": 2}, "trained for 3 players"),
        ({"opponents": ["pretrained_2p"], "players": 4}, "trained for 2 players"),
    ],
)
def test_agents_that_cannot_play_the_game_are_refused_at_creation(web, body, words):
    client, config = web
    status, answer = client.request("POST", "/api/games", body)
    assert status == 400 and words in answer["error"], answer
    assert not config.tables


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_pretrained_plays_every_player_count(web, players):
    client, _ = web
    state = client.post(
        "/api/games",
        {"opponents": ["pretrained"], "players": players, "seat": players, "seed": 2},
    )
    for _ in range(3 * players):
        status, state = move(client, state)
        assert status == 200, state
    assert state["turns"] > players and state["notes"] == []


def test_a_model_trained_for_other_rules_is_played_with_a_note_every_time(web):
    client, _ = web
    for _ in range(2):  # not only the first game (the terminal's warning comes once)
        state = client.post(
            "/api/games", {"opponents": ["pretrained"], "rules": {"wilds": "kings"}}
        )
        (note,) = state["notes"]
        assert note.startswith("pretrained was trained for 2 players") and "wilds" in note


def test_rules_whose_rounds_can_get_stuck_play_with_the_reason_shown(web):
    client, _ = web
    rules = {"num_decks": 1, "start_size": 5, "wilds": "none"}
    state = client.post("/api/games", {"opponents": ["greedy"], "players": 6, "rules": rules})
    reason = Rules(num_players=6, num_decks=1, start_size=5, wilds="none").stuck_round_reason()
    assert reason is not None and state["notes"] == [reason]
    plain = client.post("/api/games", {"opponents": ["greedy"], "players": 6})
    assert plain["notes"] == []
