"""Many players at one web table server at once: errors and latency on loopback.

    python benchmarks/web_load.py --players 200 --moves 50

Starts ``python -m agents.web --port 0`` (its own process, logs in a temporary folder), then
``--players`` threads each open one keep-alive HTTP/1.1 connection, create a game against
``random`` and send ``--moves`` requests (their own first legal move, or a bot's move), all
at once. Prints the requests, the errors (any answer but 200, a reset or a timeout) and the
latency's median, 95th and 99th percentile and maximum, and with ``--json`` writes them. A
measurement, not a test: the figures depend on the machine and its load (docs/web.md).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0  # seconds one request may take before it counts as an error


def player(port: int, moves: int, seed: int, start: threading.Barrier, out: dict) -> None:
    """One person: a game, then ``moves`` requests on the same connection."""
    latencies: list[float] = []
    errors: list[str] = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    headers = {"Content-Type": "application/json"}

    def ask(method: str, path: str, body: object = None) -> dict | None:
        began = time.perf_counter()
        try:
            data = None if body is None else json.dumps(body).encode()
            connection.request(method, path, body=data, headers=headers if data else {})
            answer = connection.getresponse()
            value = json.loads(answer.read())
        except (OSError, http.client.HTTPException, ValueError) as error:
            errors.append(f"{type(error).__name__}: {error}"[:200])
            connection.close()
            return None
        latencies.append(time.perf_counter() - began)
        if answer.status != 200:
            errors.append(f"{answer.status}: {value.get('error', '')}"[:200])
            return None
        return value

    start.wait()
    state = ask("POST", "/api/games", {"opponents": ["random"], "seed": seed, "seat": 1})
    for _ in range(moves):
        if state is None:
            break
        if state["done"]:
            state = ask("POST", "/api/games", {"opponents": ["random"], "seed": seed + 1})
        elif state["legal"]:
            since = state["events_from"] + len(state["events"])
            body = {"action": state["legal"][0], "since": since}
            state = ask("POST", f"/api/games/{state['id']}/act", body)
        else:
            since = state["events_from"] + len(state["events"])
            state = ask("POST", f"/api/games/{state['id']}/step", {"since": since})
    connection.close()
    out[seed] = (latencies, errors)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=200, help="players at once (default: 200)")
    parser.add_argument("--moves", type=int, default=50, help="requests each (default: 50)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    if not 1 <= args.players <= 1000 or not 1 <= args.moves <= 10_000:
        parser.error("--players must be 1 to 1000 and --moves 1 to 10000")
    with tempfile.TemporaryDirectory() as logs:
        server = subprocess.Popen(
            [sys.executable, "-m", "agents.web", "--port", "0", "--logs", logs]
            + ["--reports", logs],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        try:
            line = server.stdout.readline() if server.stdout else ""
            if "http://127.0.0.1:" not in line:
                parser.error(f"the server did not start: {line.strip()!r}")
            port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
            start = threading.Barrier(args.players)
            out: dict = {}
            threads = [
                threading.Thread(target=player, args=(port, args.moves, seed, start, out))
                for seed in range(args.players)
            ]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    latencies = [x for lat, _ in out.values() for x in lat]
    errors = [e for _, errs in out.values() for e in errs]
    figures = {
        "players": args.players,
        "moves": args.moves,
        "requests": len(latencies) + sum(1 for e in errors if not e[:3].isdigit()),
        "errors": len(errors),
        "error_kinds": sorted({e.split(":")[0] for e in errors}),
        "seconds": round(wall, 2),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.50), 1),
            "p95": round(1000 * percentile(latencies, 0.95), 1),
            "p99": round(1000 * percentile(latencies, 0.99), 1),
            "max": round(1000 * max(latencies, default=float("nan")), 1),
        },
        "load_average": list(os.getloadavg()),
    }
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
