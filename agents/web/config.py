"""The server's configuration and live games (:class:`Config`), and their game logs: each game
is logged once, when it ends or is left, and every open one when the server stops."""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from agents.web.table import BOT_SECONDS, WebTable
from trash_env.files import atomic_write_text

LOCK_WAIT = 0.1  # seconds the stopping server waits for a game busy with a move


@dataclass
class Config:
    """Where the server reads and writes: game logs (written and watched), reports, models."""

    logs: Path
    reports: Path | None = None
    models: Path | None = None
    bot_seconds: float = BOT_SECONDS
    allowed_hosts: tuple[str, ...] = ()  # names other than the bind address and localhost
    tables: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
    """Log every game still open (the server is stopping): they are left, as at the terminal.
    A game busy with a bot move is logged as it stands after a short wait (the move only
    reads the game), so that stopping never waits on a slow bot."""
    with config.lock:
        tables = list(config.tables.values())
    for table in tables:
        locked = table.lock.acquire(timeout=LOCK_WAIT)
        try:
            write_log(config, table)
        finally:
            if locked:
                table.lock.release()
