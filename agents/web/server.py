"""The HTTP server: the page's files and a small JSON API, on the standard library alone.

``http.server`` is enough for one person's table on their own machine: a handful of JSON
routes, no sessions beyond a game's random id, no templating. Every request is bounded (body
size, query length, one deadline for the whole request), every answer to bad input is a JSON
``{"error": ...}`` with a one-line reason and ends the connection, and an unexpected failure is
reported as one line, never a traceback. One framing rule: a body has exactly one
Content-Length and is read to its end; ``Transfer-Encoding`` is refused. One Host rule: every
request names this server (its bind address, ``localhost``, or a name given with
``--allow-host``), and a page's ``Origin`` must name it the same way. Files are read only from
the configured folders (:mod:`agents.web.folders`).
"""

from __future__ import annotations

import io
import json
import re
import socket
import sys
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseServer
from urllib.parse import parse_qs, unquote, urlsplit

from agents.bots.base import MODEL_SUFFIX, known_agents
from agents.play.game_log import read_log
from agents.web.config import Config, write_log
from agents.web.folders import confined, inside, listing, models, shown
from agents.web.guard import DeadlineReader, names_server, own_names
from agents.web.leaderboard import GAME_FILE, MAX_REPORT_BYTES, games_folder, parse_report
from agents.web.replay import replay_data
from agents.web.table import BotTooSlow, WebTable, rules_form
from trash_env.engine import EVENT_KINDS, Decision

STATIC = Path(__file__).resolve().parent / "static"
STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
MAX_BODY = 64 * 1024  # bytes of a request body (a new game's form is well under 2 KiB)
MAX_TARGET = 2048  # characters of a request's path and query
MAX_TABLES = 256  # live games kept; the least recently used is left to make room
SOCKET_TIMEOUT = 30.0  # seconds a write may wait on a slow reader
REQUEST_SECONDS = 30.0  # one deadline for a whole request: waiting for it, its head and body
LISTEN_QUEUE = 256  # connections waiting to be accepted (200 players at once, and some)
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}
BOTS = ["greedy", "counting", "random", "search", "pretrained"]


class BadRequest(ValueError):
    """A request the server refuses, with the status to answer."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number JSON allows")


_DIGITS = re.compile(r"[0-9]{1,9}")


class Handler(BaseHTTPRequestHandler):
    """One request. The routes: ``/`` and ``/static/*`` (the page); ``/api/...`` (JSON)."""

    server_version = "trash-web"
    protocol_version = "HTTP/1.1"  # keep-alive: a player's moves reuse one connection
    config: Config  # set on the subclass made by make_server
    names: frozenset[str]  # this server's own names (own_names), set by make_server
    timeout = SOCKET_TIMEOUT
    deadline = 0.0  # time.monotonic() by which the current request must have arrived whole

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # quiet: the terminal shows the URL and errors only

    def setup(self) -> None:
        super().setup()
        self.rfile.close()
        self.rfile = io.BufferedReader(DeadlineReader(self, REQUEST_SECONDS))

    def handle_one_request(self) -> None:
        self.deadline = time.monotonic() + REQUEST_SECONDS
        super().handle_one_request()

    def handle(self) -> None:
        """Requests until the connection ends; a peer that went away or ran out of time ends
        it quietly (a request out of time is answered 408 where the socket still takes it)."""
        try:
            super().handle()
        except TimeoutError:
            self.close_connection = True
            try:
                self._json({"error": f"the request took longer than {REQUEST_SECONDS:.0f} s"}, 408)
            except OSError:
                pass
        except OSError:
            self.close_connection = True

    # ------------------------------------------------------------ plumbing

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.connection.settimeout(SOCKET_TIMEOUT)  # the answer's own bound, not the request's
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if getattr(self, "command", None) != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's own refusals (501, 414, 431, 400 for a bad request line)
        in the API's form: one line of JSON with the security headers."""
        short = self.responses.get(code, ("error", ""))[0]
        self.close_connection = True  # the request may not have been read to its end
        if not str(getattr(self, "request_version", "")).startswith("HTTP/1."):
            self.request_version = "HTTP/1.1"  # an unreadable request line still gets headers
        self._json({"error": f"{message or short}"[:300]}, code)

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
        try:
            data = self.rfile.read(int(length))
        except TimeoutError as error:
            raise BadRequest(str(error), HTTPStatus.REQUEST_TIMEOUT) from None
        if len(data) < int(length):
            raise BadRequest(f"the request body ended after {len(data)} of its {length} bytes")
        self._read = True
        if not data:
            return {}
        try:
            return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            reason = " (NaN and Infinity are not numbers here)" if "allows" in str(error) else ""
            raise BadRequest(f"the request body must be JSON{reason}") from None

    def _dispatch(self, method: str) -> None:
        self._read = False
        try:
            if len(self.path) > MAX_TARGET:
                raise BadRequest("request target too long", HTTPStatus.REQUEST_URI_TOO_LONG)
            self._check_framing(method)
            self._check_host()
            if method == "POST":
                self._check_origin()
            url = urlsplit(self.path)
            parts = [unquote(p) for p in url.path.split("/") if p]
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            self._route(method, parts, query)
            if not self._read and self._declared_body():
                self.close_connection = True  # a body nobody read is not the next request
        except BadRequest as error:
            self._refuse(str(error), error.status)
        except BotTooSlow as error:
            self._refuse(str(error), HTTPStatus.SERVICE_UNAVAILABLE)
        except (ValueError, ImportError) as error:  # ImportError: a model's library is absent
            self._refuse(str(error)[:500], HTTPStatus.BAD_REQUEST)
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the page went away
        except Exception as error:  # a bug: one line to the terminal and the page
            line = f"{type(error).__name__}: {error}"[:300]
            sys.stderr.write(f"trash-web: internal error on {method} {self.path[:200]}: {line}\n")
            self._refuse(f"internal error: {line}", HTTPStatus.INTERNAL_SERVER_ERROR)

    def _refuse(self, message: str, status: int) -> None:
        """An error answer, which ends the connection: whatever follows a refused request
        (its unread body, say) is never read as a request."""
        self.close_connection = True
        self._json({"error": message}, status)

    def _declared_body(self) -> bool:
        return self.headers.get("Content-Length", "0") not in ("", "0")

    def _check_framing(self, method: str) -> None:
        """One framing rule: a body is framed by exactly one Content-Length, which a GET does
        not have; ``Transfer-Encoding`` (chunked or any other) is refused, not parsed."""
        if self.headers.get("Transfer-Encoding") is not None:
            raise BadRequest(
                "Transfer-Encoding is not accepted: send the body with a Content-Length",
                HTTPStatus.NOT_IMPLEMENTED,
            )
        if len(self.headers.get_all("Content-Length") or []) > 1:
            raise BadRequest("a request has at most one Content-Length")
        if method == "GET" and self._declared_body():
            raise BadRequest("a GET request has no body")

    def _check_origin(self) -> None:
        """Only this server's own page may change a game: a request another site's page
        sends (``Sec-Fetch-Site``, ``Origin``) is refused, and a body must be declared JSON,
        which no page elsewhere can send here without the browser asking first (and this
        server answers no such question)."""
        site = (self.headers.get("Sec-Fetch-Site") or "same-origin").lower()
        if site not in ("same-origin", "none"):
            raise BadRequest(
                f"requests from other sites are refused (Sec-Fetch-Site: {site[:40]})",
                HTTPStatus.FORBIDDEN,
            )
        origin = self.headers.get("Origin")
        if origin is not None and not self._names_this_server(origin, "http://"):
            raise BadRequest(
                f"requests from other sites are refused (Origin: {origin[:80]})",
                HTTPStatus.FORBIDDEN,
            )
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise BadRequest(
                "a request body must be sent as Content-Type: application/json",
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            )

    def _check_host(self) -> None:
        """On every bind address, answer only requests addressed to this server by one of its
        own names (:func:`own_names`): a page elsewhere that points its own name at this
        machine (DNS rebinding) must not read the logs."""
        if not self._names_this_server(self.headers.get("Host") or "", ""):
            raise BadRequest(
                "requests must be addressed to this server by its own name (the bind address, "
                "localhost, or a name given with --allow-host)",
                HTTPStatus.FORBIDDEN,
            )

    def _names_this_server(self, value: str, scheme: str) -> bool:
        return names_server(value, scheme, self.names, bound_address(self.server)[1])

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
        named = [a for a in known_agents() if a.startswith("pretrained_")]
        return {
            "bots": BOTS + named,
            "models": sorted(models(self.config.models, MODEL_SUFFIX)),
            "rules": rules_form(),
            "players": [2, 6],
            "logs": shown(self.config.logs),
            "reports": shown(self.config.reports),
            "models_folder": shown(self.config.models),
            "decisions": [d.name.lower() for d in Decision],
            "event_kinds": list(EVENT_KINDS),
        }

    def _table(self, table_id: str) -> WebTable:
        with self.config.lock:
            table = self.config.tables.get(table_id)
            if table is not None:
                self.config.tables.move_to_end(table_id)  # recently used: evicted last
        if table is None:
            raise BadRequest(
                "no such game (it ended, was left, or the server restarted)", HTTPStatus.NOT_FOUND
            )
        return table

    def _since(self, source: dict) -> int:
        since = source.get("since", 0)
        if isinstance(since, str):
            since = int(since) if _DIGITS.fullmatch(since) else -1
        if isinstance(since, bool) or not isinstance(since, int) or since < 0:
            raise BadRequest(f"since must be a whole number of events, got {since!r}"[:200])
        return since

    def _games(self, method: str, route: list[str], query: dict[str, str]) -> None:
        if method == "POST" and not route:
            table = WebTable.from_request(self._body(), self.config.models, self.config.bot_seconds)
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
        if route[1] not in ("step", "act", "leave"):
            raise BadRequest("no such API route", HTTPStatus.NOT_FOUND)
        since = self._since(body)  # checked before anything is applied
        with table.lock:
            if route[1] == "leave":
                self._close(table)
                return self._json({"log": table.logged.name if table.logged else None})
            try:
                if route[1] == "step":
                    table.step()
                else:
                    table.act(body.get("action"))
            except BotTooSlow:
                self._close(table)
                raise
            if table.game.done and table.logged is None:
                self._close(table)
            return self._json(table.state(since))

    def _open(self, table: WebTable) -> None:
        """Keep ``table``; past MAX_TABLES the least recently used game is left, and logged
        only if the person made a move in it (a game nobody played leaves no file)."""
        with self.config.lock:
            tables = self.config.tables
            old = [tables.popitem(last=False)[1] for _ in range(len(tables) - MAX_TABLES + 1)]
            tables[table.id] = table
        for stale in old:
            with stale.lock:
                if any(player == stale.seat for player, _ in stale.actions):
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


class TableServer(ThreadingHTTPServer):
    """A thread per connection; a listen queue deep enough for 200 players at once."""

    request_queue_size = LISTEN_QUEUE
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A connection that failed outside a request: one line for a bug, nothing for a peer
        that went away (the standard library prints a traceback)."""
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        line = f"{type(error).__name__}: {error}"[:300]
        sys.stderr.write(f"trash-web: internal error on a connection: {line}\n")


def make_server(config: Config, host: str = "127.0.0.1", port: int = 0) -> TableServer:
    """A server bound to ``host:port`` (port 0: a free one); run it with ``serve_forever``.
    It answers requests that name it by ``host``, ``localhost`` or ``config.allowed_hosts``."""
    handler = type("BoundHandler", (Handler,), {"config": config})
    server_class: type[TableServer] = TableServer
    if ":" in host:
        server_class = type("TableServer6", (TableServer,), {"address_family": socket.AF_INET6})
    server = server_class((host, port), handler)
    given = (host,) if host else ()
    handler.names = own_names(  # type: ignore[attr-defined]
        bound_address(server)[0], given + tuple(config.allowed_hosts)
    )
    return server
