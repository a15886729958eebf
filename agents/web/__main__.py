"""``python -m agents.web`` (or ``trash-web``): serve the table on http://127.0.0.1:PORT/.

Ctrl-C, SIGTERM and SIGHUP stop it at once, writing the logs of the games still open.
Exit codes: 0 after a stop, 2 for bad options or a port that cannot be bound.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.play.game_log import DEFAULT_LOG_DIR
from agents.web.config import Config, write_open_logs
from agents.web.guard import WILDCARDS, host_name
from agents.web.server import bound_address, make_server
from trash_env.cli import Parser, program_name

DEFAULT_PORT = 8765


def build_parser() -> Parser:
    parser = Parser(
        prog=program_name("python -m agents.web", "trash-web"),
        description="Play Trash in a browser, watch game logs and open evaluate.py reports.",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to serve on, 0 for a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default: 127.0.0.1, this machine only; another "
        "address lets other machines join your games: give the name they use with --allow-host)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a name or address other machines use to reach this table (repeatable; e.g. "
        "192.168.1.5 or mybox.lan): requests naming anything but the bind address, localhost "
        "or these are refused, so a page elsewhere cannot rebind its name to your table",
    )
    parser.add_argument(
        "--logs",
        type=Path,
        default=DEFAULT_LOG_DIR,
        metavar="DIR",
        help=f"game logs: written for every web game, listed in Watch "
        f"(default: {DEFAULT_LOG_DIR}, the terminal game's)",
    )
    parser.add_argument(
        "--reports",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="folder of evaluate.py --json reports listed in Rank (default: the working directory)",
    )
    parser.add_argument(
        "--models",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of .safetensors models offered as opponents "
        "(default: none; the shipped 'pretrained' is always offered)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0 to 65535, got {args.port}")
    notes = []
    for flag, folder in (("--reports", args.reports), ("--models", args.models)):
        if folder is not None and folder.exists() and not folder.is_dir():
            parser.error(f"{flag} {folder} is not a folder")
        if folder is not None and not folder.exists():
            notes.append(f"{flag} {folder} does not exist yet: its files are listed once it does")
    for name in args.allow_host:
        try:
            host_name(name)
        except ValueError as error:
            parser.error(f"--allow-host: {error}")
    config = Config(
        logs=args.logs,
        reports=args.reports,
        models=args.models,
        allowed_hosts=tuple(args.allow_host),
    )
    try:
        server = make_server(config, args.host, args.port)
    except OSError as error:
        parser.error(f"cannot serve on {args.host}:{args.port}: {error.strerror or error}")
    host, port = bound_address(server)
    shown = f"[{host}]" if ":" in host else host
    if not (host.startswith("127.") or host == "::1") and not args.allow_host:
        where = "this machine's address on your network" if host in WILDCARDS else host
        notes.append(
            f"other machines reach this table only by a name given with --allow-host "
            f"(e.g. --allow-host {where})"
        )
    for note in notes:
        print(f"Note: {note}.", flush=True)
    print(f"Trash table at http://{shown}:{port}/  (Ctrl-C to stop)", flush=True)
    stop_on_signals()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("\nStopped.", flush=True)
    finally:
        server.server_close()
        write_open_logs(config)
    return 0


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # out of serve_forever, through main's finally: logs are written


def stop_on_signals() -> None:
    """SIGTERM (``kill``, a service manager) and SIGHUP (the terminal closed) stop the server
    as Ctrl-C does, so that open games are logged whichever way it ends."""
    signal.signal(signal.SIGINT, _stop)  # also where Ctrl-C was ignored (a background job)
    signal.signal(signal.SIGTERM, _stop)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, _stop)


if __name__ == "__main__":
    sys.exit(main())
