"""``python -m agents.web`` (or ``trash-web``): serve the table on http://127.0.0.1:PORT/.

Exit codes: 0 after Ctrl-C, 2 for bad options or a port that cannot be bound.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from agents.play.game_log import DEFAULT_LOG_DIR
from agents.web.server import Config, bound_address, make_server, write_open_logs

DEFAULT_PORT = 8765


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.web",
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
        "address lets other machines join your games)",
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
    for flag, folder in (("--reports", args.reports), ("--models", args.models)):
        if folder is not None and not folder.is_dir():
            parser.error(f"{flag} {folder} is not a folder")
    config = Config(logs=args.logs, reports=args.reports, models=args.models)
    try:
        server = make_server(config, args.host, args.port)
    except OSError as error:
        parser.error(f"cannot serve on {args.host}:{args.port}: {error.strerror or error}")
    host, port = bound_address(server)
    shown = f"[{host}]" if ":" in host else host
    print(f"Trash table at http://{shown}:{port}/  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        server.server_close()
        write_open_logs(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
