"""The web table against issue 41's hostile inputs, one test each: request framing (chunked
smuggling, bodies on GETs, two lengths, short bodies, dripped requests, refusals that end the
connection), one Host rule on every bind address (DNS rebinding on 127.0.0.2 and on wildcard
binds, Origin checked against the server's own names), forged results in game logs, and a
server that stops at once and prints no traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from web_support import TIMEOUT, play_out

import agents.web.server as server_module
from agents.play.game_log import read_log
from agents.web.config import Config
from agents.web.guard import own_names

ROOT = Path(__file__).resolve().parent.parent
GAME = b'{"seed": 3}'


def exchange(port: int, data: bytes, host: str = "127.0.0.1") -> list[bytes]:
    """Send ``data`` on one connection and read until the server closes it: the status lines
    of every answer it gave."""
    with socket.create_connection((host, port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return [line for line in b"".join(chunks).split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]


def post_request(body: bytes, headers: str = "Content-Type: application/json\r\n") -> bytes:
    return (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + headers.encode()
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )


# ----------------------------------------------------------------------------------- framing


def test_a_refused_chunked_post_smuggles_no_request(web):
    """The issue's attack: a cross-site text/plain POST, chunked, whose body is a JSON POST
    that creates a game. One refusal, the connection closed, no game."""
    client, config = web
    inner = post_request(GAME)
    data = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n"
        b"Origin: http://evil.example\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(inner)
        + inner
        + b"\r\n0\r\n\r\n"
    )
    answers = exchange(client.port, data)
    assert len(answers) == 1 and answers[0].split()[1] in (b"403", b"501"), answers
    assert not config.tables


def test_a_chunked_post_is_refused_even_from_the_page(web):
    client, config = web
    data = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(GAME) + GAME + b"\r\n0\r\n\r\n"
    )
    assert exchange(client.port, data) == [b"HTTP/1.1 501 Not Implemented"]
    assert not config.tables


def test_a_gets_body_is_not_read_as_the_next_request(web):
    client, config = web
    inner = post_request(GAME)
    data = b"GET /api/logs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n" % len(inner)
    assert exchange(client.port, data + inner) == [b"HTTP/1.1 400 Bad Request"]
    assert not config.tables


def test_two_content_lengths_are_refused(web):
    client, config = web
    data = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 0\r\nContent-Length: %d\r\n\r\n" % len(GAME) + GAME
    )
    assert exchange(client.port, data) == [b"HTTP/1.1 400 Bad Request"]
    assert not config.tables


@pytest.mark.parametrize(
    "first",
    [
        b"GET /api/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/logs HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        post_request(b"[1]", "Content-Type: text/plain\r\n"),
        post_request(b"{bad json"),
    ],
)
def test_every_refusal_ends_the_connection(web, first):
    """A request pipelined after a refused one is never answered."""
    client, config = web
    answers = exchange(client.port, first + post_request(GAME))
    assert len(answers) == 1 and answers[0].split()[1][:1] == b"4", answers
    assert not config.tables


def test_keep_alive_goes_on_after_answers(web):
    client, config = web
    request = b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with socket.create_connection(("127.0.0.1", client.port), timeout=TIMEOUT) as sock:
        sock.sendall(request + post_request(GAME) + request)
        received = b""
        while received.count(b"HTTP/1.1 200 OK") < 3:
            chunk = sock.recv(65536)
            assert chunk, received[-300:]
            received += chunk
    assert len(config.tables) == 1


def test_a_short_body_is_refused(web):
    client, config = web
    data = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n" + GAME
    )
    with socket.create_connection(("127.0.0.1", client.port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ") and b"ended after 11 of its 100 bytes" in answer
    assert not config.tables


@pytest.mark.parametrize("part", ["head", "body"])
def test_a_dripped_request_ends_at_its_deadline(web, monkeypatch, part):
    """One byte every 0.3 s never trips a per-read timeout; the whole request's deadline
    (shortened here to 1.5 s) ends it, answered 408 where the head was read."""
    monkeypatch.setattr(server_module, "REQUEST_SECONDS", 1.5)
    client, config = web
    head = (
        b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    sent, drip = (b"", head) if part == "head" else (head, b"{" + b" " * 99)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", client.port), timeout=TIMEOUT) as sock:
        sock.sendall(sent)
        answer = b""
        for byte in drip:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break  # the server closed the connection
            time.sleep(0.3)
            if time.monotonic() - started > 10:
                break
        sock.settimeout(TIMEOUT)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    took = time.monotonic() - started
    assert took < 10, took  # a per-read timeout would have taken 100 drips, 30 s
    if part == "body":
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:100]
    assert not config.tables


def test_the_server_stops_at_once_and_prints_no_traceback(tmp_path):
    """Peers that send a short body and close, or close mid-request, leave nothing on
    stderr; SIGTERM stops the server at once."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agents.web", "--port", "0", "--logs", str(tmp_path / "logs")]
        + ["--reports", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("Trash table at http://127.0.0.1:"), line
        port = int(line.split()[3].rstrip("/").rsplit(":", 1)[1])
        short = (
            b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{}"
        )
        for data in (short, short[:30], b"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
            sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(data)
            sock.close()  # with SO_LINGER 0: a reset, the answer has nowhere to go
        time.sleep(1.0)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=TIMEOUT)
        took = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0 and "Stopped." in out
    assert err == "", err
    assert took < 1.5, took


# ------------------------------------------------------------------------------------ hosts


def status_of(port: int, host_header: str, bind: str, origin: str | None = None) -> int:
    extra = f"Origin: {origin}\r\n" if origin else ""
    data = (
        f"POST /api/games HTTP/1.1\r\nHost: {host_header}\r\n{extra}Connection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(GAME)}\r\n\r\n"
    ).encode() + GAME
    # Connection: close, so that an accepted request's answer ends the exchange (a kept-alive
    # connection would be read until the server's request deadline).
    return int(exchange(port, data, bind)[0].split()[1])


def test_one_host_rule_on_another_loopback_bind(tmp_path):
    """Bound to 127.0.0.2 (not the one address the old rule covered), with one name allowed
    for LAN use: a rebinding page's own name is refused, by Host and by Origin alike."""
    config = Config(logs=tmp_path / "logs", allowed_hosts=("table.lan",))
    server = server_module.make_server(config, "127.0.0.2", 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        port = server.server_address[1]
        bind = "127.0.0.2"
        for host, origin, status in [
            (f"evil.example:{port}", None, 403),
            (f"evil.example:{port}", f"http://evil.example:{port}", 403),
            (f"127.0.0.2:{port}", f"http://evil.example:{port}", 403),
            (f"127.0.0.2:{port}", "null", 403),
            (f"127.0.0.2:{port + 1}", None, 403),
            (f"127.0.0.1:{port}", None, 403),  # another address: not this server
            (f"127.0.0.2:{port}", f"http://127.0.0.2:{port}", 200),
            (f"localhost:{port}", f"http://localhost:{port}", 200),
            (f"TABLE.lan:{port}", f"http://table.lan:{port}", 200),
            (f"127.0.0.2:{port}", f"http://table.lan:{port}", 200),
            ("127.0.0.2", None, 200),
        ]:
            assert status_of(port, host, bind, origin) == status, (host, origin)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(TIMEOUT)


@pytest.mark.parametrize(
    "bind, allowed, names",
    [
        ("0.0.0.0", (), {"0.0.0.0", "localhost", "127.0.0.1", "[::1]"}),
        ("::", ("192.168.1.5",), {"[::]", "localhost", "127.0.0.1", "[::1]", "192.168.1.5"}),
        ("::1", ("Table.LAN.",), {"[::1]", "localhost", "table.lan"}),
        ("127.0.0.1", ("fe80::1",), {"127.0.0.1", "localhost", "[fe80::1]"}),
    ],
)
def test_wildcard_binds_answer_their_own_names_only(bind, allowed, names):
    """0.0.0.0 and :: (the LAN mode) take loopback and the names given with --allow-host;
    a rebinding page's name is never one of them."""
    assert own_names(bind, allowed) == names


def test_allow_host_refuses_what_is_not_a_name():
    result = subprocess.run(
        [sys.executable, "-m", "agents.web", "--allow-host", "evil example/"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 2 and "--allow-host" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------------------- forged results


def first_legal(state: dict) -> int:
    return state["legal"][0]


@pytest.mark.parametrize(
    "forge, named",
    [
        (lambda log: {"winners": [1 - log["winners"][0]]}, "winners: the log says"),
        (lambda log: {"placings": log["placings"][::-1]}, "places: the log says"),
        (lambda log: {"rounds_won": [r + 1 for r in log["rounds_won"]]}, "rounds won: the log"),
        (lambda log: {"finished": False}, "finished: the log says no; the replay yes"),
    ],
)
def test_a_forged_result_shows_the_replays_and_names_the_claim(web, forge, named):
    client, config = web
    state = client.post("/api/games", {"opponents": ["greedy"], "seed": 4})
    log = read_log(config.logs / play_out(client, state, first_legal)["log"])
    assert log["finished"] and log["placings"][0] != log["placings"][1]
    (config.logs / "forged.json").write_text(json.dumps(log | forge(log)))
    shown = client.get("/api/logs/forged.json")
    assert shown["winners"] == log["winners"] and shown["placings"] == log["placings"]
    assert shown["rounds_won"] == log["rounds_won"] and shown["finished"] is True
    assert len(shown["disagreements"]) == 1 and shown["disagreements"][0].startswith(named)
    assert named in shown["note"] and shown["frames"][-1]["done"]
    honest = client.get(f"/api/logs/{config.logs.glob('web-*.json').__next__().name}")
    assert honest["disagreements"] == [] and honest["note"] is None
