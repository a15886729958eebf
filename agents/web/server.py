"""The HTTP server: the page's files and a small JSON API, on the standard library alone.

``http.server`` is enough for one person's table on their own machine: a handful of JSON
routes, no sessions beyond a game's random id, no templating. Every request is bounded (body
size, query length, one socket timeout), every answer to bad input is a JSON ``{"error": ...}``
with a one-line reason, and an unexpected failure is reported as one line, never a traceback.
Files are read only from the configured folders (:mod:`agents.web.folders`).
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseServer
from urllib.parse import parse_qs, unquote, urlsplit

from agents.bots.base import MODEL_SUFFIX, known_agents
from agents.play.game_log import read_log
from agents.web.folders import confined, inside, listing
from agents.web.leaderboard import GAME_FILE, MAX_REPORT_BYTES, games_folder, parse_report
from agents.web.replay import replay_data
from agents.web.table import WebTable
from trash_env.cli import option_docs
from trash_env.files import atomic_write_text
from trash_env.rules import Rules, option_spec

STATIC = Path(__file__).resolve().parent / "static"
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
MAX_BODY = 64 * 1024  # bytes of a request body (a new game's form is well under 2 KiB)
MAX_TARGET = 2048  # characters of a request's path and query
MAX_TABLES = 16  # live games kept; the oldest is left (and logged) to make room
SOCKET_TIMEOUT = 30.0
BOTS = ["greedy", "counting", "random", "search", "pretrained"]


class BadRequest(ValueError):
    """A request the server refuses, with the status to answer."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Config:
    """Where the server reads and writes: game logs (written and watched), reports, models."""

    logs: Path
    reports: Path | None = None
    models: Path | None = None
    tables: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def rules_form() -> list[dict]:
    """Every rules option for the page's form: name, default, kind, choices and its sentence."""
    docs, defaults = option_docs(), Rules()
    out = []
    for f in fields(Rules):
        if f.name in ("num_players", "max_turns"):
            continue
        default, choices = getattr(defaults, f.name), option_spec(f)["choices"] or ()
        if isinstance(default, bool) or not isinstance(default, str):
            choices = ()  # a checkbox, or a number field the server checks (free_draws: 0 or 3)
        kind = "bool" if isinstance(default, bool) else "choice" if choices else "int"
        out.append(
            {
                "name": f.name,
                "default": default,
                "kind": kind,
                "choices": list(choices),
                "help": docs.get(f.name, "").replace("%%", "%"),
            }
        )
    return out


def write_log(config: Config, table: WebTable) -> None:
    """Write ``table``'s game log into the logs folder once (a failure is reported, not raised)."""
    if table.logged is not None:
        return
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    folder = config.logs
    path = folder / f"web-{stamp}-seed{table.seed}.json"
    for k in range(2, 100):
        if not path.exists():
            break
        path = folder / f"web-{stamp}-seed{table.seed}-{k}.json"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(table.log()) + "\n")
    except OSError as error:
        sys.stderr.write(f"trash-web: could not write the game log {path}: {error}\n")
        return
    table.logged = path


def write_open_logs(config: Config) -> None:
    """Log every game still open (the server is stopping): they are left, as at the terminal."""
    with config.lock:
        tables = list(config.tables.values())
    for table in tables:
        with table.lock:
            write_log(config, table)


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Handler(BaseHTTPRequestHandler):
    """One request. The routes: ``/`` and ``/static/*`` (the page); ``/api/...`` (JSON)."""

    server_version = "trash-web"
    config: Config  # set on the subclass made by make_server
    timeout = SOCKET_TIMEOUT

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # quiet: the terminal shows the URL and errors only

    # ------------------------------------------------------------ plumbing

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        )
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, value: object, status: int = HTTPStatus.OK) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _body(self) -> object:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("a request body needs a Content-Length", HTTPStatus.LENGTH_REQUIRED)
        if int(length) > MAX_BODY:
            raise BadRequest(
                f"request body larger than {MAX_BODY} bytes", HTTPStatus.REQUEST_ENTITY_TOO_LARGE
            )
        data = self.rfile.read(int(length))
        if not data:
            return {}
        try:
            return json.loads(data.decode("utf-8"), parse_constant=lambda c: None)
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise BadRequest("the request body must be JSON") from None

    def _dispatch(self, method: str) -> None:
        try:
            if len(self.path) > MAX_TARGET:
                raise BadRequest("request target too long", HTTPStatus.REQUEST_URI_TOO_LONG)
            self._check_host()
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/") if p]
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            self._route(method, parts, query)
        except BadRequest as error:
            self._json({"error": str(error)}, error.status)
        except (ValueError, ImportError) as error:  # ImportError: a model's library is absent
            self._json({"error": str(error)[:500]}, HTTPStatus.BAD_REQUEST)
        except (ConnectionError, TimeoutError):
            pass  # the page went away
        except Exception as error:  # a bug: one line to the terminal and the page
            line = f"{type(error).__name__}: {error}"[:300]
            sys.stderr.write(f"trash-web: internal error on {method} {self.path[:200]}: {line}\n")
            self._json({"error": f"internal error: {line}"}, HTTPStatus.INTERNAL_SERVER_ERROR)

    def _check_host(self) -> None:
        """On a loopback address, answer only requests addressed to it: a page elsewhere
        that points its own name at 127.0.0.1 (DNS rebinding) must not read the logs."""
        bound, bound_port = bound_address(self.server)
        if bound not in ("127.0.0.1", "::1"):
            return
        host = (self.headers.get("Host") or "").lower()
        port = str(bound_port)
        if not any(host in (name, f"{name}:{port}") for name in _LOOPBACK_NAMES):
            raise BadRequest(
                "requests must be addressed to this machine's own address", HTTPStatus.FORBIDDEN
            )

    def do_GET(self) -> None:  # noqa: N802 (http.server's names)
        self._dispatch("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    # ------------------------------------------------------------ routes

    def _route(self, method: str, parts: list[str], query: dict[str, str]) -> None:
        if method == "GET" and not parts:
            return self._static("index.html")
        if method == "GET" and len(parts) == 2 and parts[0] == "static":
            return self._static(parts[1])
        if not parts or parts[0] != "api":
            raise BadRequest("no such page", HTTPStatus.NOT_FOUND)
        route = parts[1:]
        if method == "GET" and route == ["options"]:
            return self._json(self._options())
        if route[:1] == ["games"]:
            return self._games(method, route[1:], query)
        if method == "GET" and route == ["logs"]:
            return self._json({"logs": listing(self.config.logs, ".json")})
        if method == "GET" and len(route) == 2 and route[0] == "logs":
            path = confined(self.config.logs, route[1], ".json")
            return self._json(replay_data(read_log(path)) | {"file": route[1]})
        if method == "GET" and route == ["reports"]:
            return self._json({"reports": listing(self.config.reports, ".json")})
        if method == "GET" and route[:1] == ["reports"] and len(route) in (2, 4):
            return self._report(route[1:])
        raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)

    def _static(self, name: str) -> None:
        path = STATIC / name
        kind = STATIC_TYPES.get(path.suffix)
        if kind is None or not inside(STATIC, path) or not path.is_file():
            raise BadRequest("no such file", HTTPStatus.NOT_FOUND)
        self._send(HTTPStatus.OK, path.read_bytes(), kind)

    def _options(self) -> dict:
        models = [f["name"] for f in listing(self.config.models, MODEL_SUFFIX)]
        named = [a for a in known_agents() if a.startswith("pretrained_")]
        return {
            "bots": BOTS + named,
            "models": models,
            "rules": rules_form(),
            "players": [2, 6],
            "logs": str(self.config.logs),
            "reports": str(self.config.reports) if self.config.reports else None,
        }

    def _table(self, table_id: str) -> WebTable:
        with self.config.lock:
            table = self.config.tables.get(table_id)
        if table is None:
            raise BadRequest(
                "no such game (it ended, was left, or the server restarted)", HTTPStatus.NOT_FOUND
            )
        return table

    def _since(self, source: dict) -> int:
        since = source.get("since", 0)
        if isinstance(since, str):
            since = int(since) if since.isdigit() and len(since) < 10 else -1
        if isinstance(since, bool) or not isinstance(since, int) or since < 0:
            raise BadRequest("since must be a whole number of events")
        return since

    def _games(self, method: str, route: list[str], query: dict[str, str]) -> None:
        if method == "POST" and not route:
            table = WebTable.from_request(self._body(), self.config.models)
            self._open(table)
            with table.lock:
                return self._json(table.state(0))
        if not route or len(route) > 2:
            raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)
        table = self._table(route[0])
        if method == "GET" and len(route) == 1:
            with table.lock:
                return self._json(table.state(self._since(query)))
        if method != "POST" or len(route) != 2:
            raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)
        body = self._body()
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object")
        with table.lock:
            if route[1] == "step":
                table.step()
            elif route[1] == "act":
                table.act(body.get("action"))
            elif route[1] == "leave":
                self._close(table)
                return self._json({"log": table.logged.name if table.logged else None})
            else:
                raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)
            if table.game.done and table.logged is None:
                self._close(table)
            return self._json(table.state(self._since(body)))

    def _open(self, table: WebTable) -> None:
        with self.config.lock:
            tables = self.config.tables
            old = [tables.popitem(last=False)[1] for _ in range(len(tables) - MAX_TABLES + 1)]
            tables[table.id] = table
        for stale in old:
            with stale.lock:
                write_log(self.config, stale)

    def _close(self, table: WebTable) -> None:
        """Write the game's log and forget the table (a finished one stays readable)."""
        write_log(self.config, table)
        if not table.game.done:
            with self.config.lock:
                self.config.tables.pop(table.id, None)

    def _report(self, route: list[str]) -> None:
        folder = self.config.reports
        if folder is None:
            raise BadRequest("the server was started without --reports", HTTPStatus.NOT_FOUND)
        path = confined(folder, route[0], ".json")
        with open(path, "rb") as file:
            report = parse_report(file.read(MAX_REPORT_BYTES + 1))
        saved = report["saved"]
        allowed = [folder, self.config.logs]
        games = None if saved is None else games_folder(saved["dir"], path, allowed)
        if len(route) == 1:
            if saved is not None:
                saved["found"] = games is not None
            return self._json(report | {"file": route[0]})
        if route[1] != "games" or not GAME_FILE.fullmatch(route[2]):
            raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)
        if games is None or route[2] not in {e["file"] for e in saved["index"]}:
            raise BadRequest("no such saved game", HTTPStatus.NOT_FOUND)
        game = confined(games, route[2], ".json")
        return self._json(replay_data(read_log(game)) | {"file": route[2]})


def bound_address(server: BaseServer) -> tuple[str, int]:
    """The host and port an IP server is bound to. ``server_address`` is typed for every
    socket family (a Unix socket's is a path); an IP socket's is ``(host, port, ...)``."""
    address = server.server_address
    if not isinstance(address, tuple):
        raise TypeError(f"not an IP server's address: {address!r}")
    return str(address[0]), int(address[1])


def make_server(config: Config, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server bound to ``host:port`` (port 0: a free one); run it with ``serve_forever``."""
    handler = type("BoundHandler", (Handler,), {"config": config})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
