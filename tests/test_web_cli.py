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
import urllib.request

import pytest
from helpers import answer_ctrl_c
from web_support import TIMEOUT, serving

from agents.play.game_log import read_log


def test_the_command_serves_and_stops_cleanly(tmp_path):
    logs = tmp_path / "logs"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents.web",
            "--port",
            "0",
            "--logs",
            str(logs),
            "--reports",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
        preexec_fn=answer_ctrl_c,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("Trash table at http://127.0.0.1:"), line
        base = line.split()[3].rstrip("/")
        with urllib.request.urlopen(base + "/", timeout=TIMEOUT) as answer:
            assert b"<title>Trash</title>" in answer.read()
        request = urllib.request.Request(
            base + "/api/games", method="POST", data=json.dumps({"seed": 5}).encode()
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            assert json.loads(answer.read())["seat"] == 0
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "Stopped." in out
    (left,) = logs.glob("web-*-seed5.json")  # the game still open was logged as left
    assert not read_log(left)["finished"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["--port", "70000"], "--port must be 0 to 65535"),
        (["--reports", "/no/such/folder"], "is not a folder"),
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
