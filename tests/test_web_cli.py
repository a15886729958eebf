"""``python -m agents.web``: prints its URL, serves the page, stops on Ctrl-C logging the games
still open; bad options exit 2 with a one-line reason. And the loopback server answers only
requests addressed to it (DNS rebinding)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import launched
from web_support import TIMEOUT, serving

from agents.play.game_log import read_log

ROOT = Path(__file__).resolve().parent.parent


def _post(base: str, path: str, body: object) -> dict:
    request = urllib.request.Request(
        base + path,
        method="POST",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
        return json.loads(answer.read())


STOP_BOUND = 5.0  # seconds; it stopped in 0.25-0.36 s with a bot move under way at load 14


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_command_serves_and_stops_on_every_signal_logging_open_games(tmp_path, signum):
    """Ctrl-C, SIGTERM and SIGHUP all stop the server at once, even with a bot move in
    progress (a slow search at six seats), and write the open games' logs."""
    logs = tmp_path / "logs"
    process = subprocess.Popen(
        launched(
            [sys.executable, "-m", "agents.web", "--port", "0", "--logs", str(logs)]
            + ["--reports", str(tmp_path)]
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("Trash table at http://127.0.0.1:"), line
        base = line.split()[3].rstrip("/")
        with urllib.request.urlopen(base + "/", timeout=TIMEOUT) as answer:
            assert b"<title>Trash</title>" in answer.read()
        assert _post(base, "/api/games", {"seed": 5})["seat"] == 0
        slow = _post(
            base,
            "/api/games",
            {"seed": 6, "players": 6, "seat": 6, "opponents": ["search:rollouts=2000"]},
        )
        worker = threading.Thread(
            target=lambda: _quietly(_post, base, f"/api/games/{slow['id']}/step", {}),
            daemon=True,
        )
        worker.start()
        time.sleep(0.2)  # the bot's move is under way
        started = time.monotonic()
        process.send_signal(signum)
        out, err = process.communicate(timeout=TIMEOUT)
        took = time.monotonic() - started
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    worker.join(timeout=TIMEOUT)  # the request ends with the server: nothing outlives the test
    assert not worker.is_alive()
    assert process.returncode == 0, err
    assert "Stopped." in out
    assert took < STOP_BOUND, took
    for seed in (5, 6):  # both games still open were logged as left
        (left,) = logs.glob(f"web-*-seed{seed}.json")
        assert not read_log(left)["finished"]


def _quietly(call, *args) -> None:
    try:
        call(*args)
    except (OSError, http.client.HTTPException):
        pass  # the server stopped under the request (refused, reset, or cut mid-answer)


@pytest.mark.parametrize(
    "args, words",
    [
        (["--port", "70000"], "--port must be 0 to 65535"),
        (["--reports", "pyproject.toml"], "is not a folder"),
        (["--port", "x"], "invalid int value"),
    ],
)
def test_bad_options_exit_2(args, words):
    result = subprocess.run(
        [sys.executable, "-m", "agents.web", *args], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 2 and words in result.stderr
    assert "Traceback" not in result.stderr


def test_requests_for_another_host_name_are_refused(tmp_path):
    with serving(tmp_path / "logs") as (client, _):
        port = int(client.base.rsplit(":", 1)[1])
        for host, status in (
            ("evil.example", 403),
            (f"evil.example:{port}", 403),
            (f"localhost:{port}", 200),
            (f"127.0.0.1:{port}", 200),
        ):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
            try:
                connection.request("GET", "/api/logs", headers={"Host": host})
                answer = connection.getresponse()
                assert answer.status == status, host
                answer.read()
            finally:
                connection.close()


def test_the_docs_command_runs_in_a_fresh_clone_and_finds_train_pys_runs(tmp_path):
    """docs/web.md's ``--models runs/ --reports results/`` starts where neither folder exists
    yet (a note says so), and once train.py has written runs/<name>/model.safetensors the run
    is offered by its name."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "agents.web", "--port", "0", "--models", "runs/"]
        + ["--reports", "results/", "--logs", str(tmp_path / "logs")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        notes = [process.stdout.readline(), process.stdout.readline()]
        line = process.stdout.readline()
        assert line.startswith("Trash table at http://127.0.0.1:"), (notes, line)
        assert all("does not exist yet" in note for note in notes), notes
        base = line.split()[3].rstrip("/")
        run = tmp_path / "runs" / "quick"
        run.mkdir(parents=True)
        for suffix in (".safetensors", ".json"):
            shipped = ROOT / "agents" / "policies" / "models" / f"pretrained_2p{suffix}"
            (run / f"model{suffix}").write_bytes(shipped.read_bytes())
        with urllib.request.urlopen(base + "/api/options", timeout=TIMEOUT) as answer:
            options = json.loads(answer.read())
        assert options["models"] == ["quick.safetensors"]
        assert options["models_folder"] == "runs" and options["reports"] == "results"
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
