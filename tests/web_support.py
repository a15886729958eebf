"""A trash-web server for the tests: bound to 127.0.0.1 on a free port, stopped at teardown,
and a small JSON client with a timeout on every request (the ``web`` fixture of
``tests/conftest.py`` serves one per test)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agents.web.server import Config, make_server

TIMEOUT = 60.0  # seconds per request: generous, the machine may be loaded


class Client:
    def __init__(self, port: int) -> None:
        self.port = port  # for the tests that speak HTTP on a socket of their own
        self.base = f"http://127.0.0.1:{port}"

    def request(
        self, method: str, path: str, body: object = None, raw: bytes | None = None
    ) -> tuple[int, object]:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def get(self, path: str) -> object:
        status, value = self.request("GET", path)
        assert status == 200, value
        return value

    def post(self, path: str, body: object = None) -> object:
        status, value = self.request("POST", path, {} if body is None else body)
        assert status == 200, value
        return value


@contextmanager
def serving(
    logs: Path | None = None,
    reports: Path | None = None,
    models: Path | None = None,
    config: Config | None = None,
) -> Iterator[tuple[Client, Config]]:
    if config is None:
        assert logs is not None, "serving needs a logs folder or a whole Config"
        config = Config(logs=logs, reports=reports, models=models)
    server = make_server(config, "127.0.0.1", 0)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield Client(server.server_address[1]), config
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=TIMEOUT)


def play_out(client: Client, state: dict, choose, limit: int = 20_000) -> dict:
    """Play the game of ``state`` to its end over the API: bots step, the person's move is
    ``choose(state)``; returns the last state (every event gathered in ``events``)."""
    events = list(state["events"])
    for _ in range(limit):
        if state["done"]:
            break
        since = len(events)
        if state["legal"]:
            state = client.post(
                f"/api/games/{state['id']}/act", {"action": choose(state), "since": since}
            )
        else:
            state = client.post(f"/api/games/{state['id']}/step", {"since": since})
        assert state["events_from"] == since
        events += state["events"]
    assert state["done"], "the game did not end within the request limit"
    state["events"] = events
    return state
