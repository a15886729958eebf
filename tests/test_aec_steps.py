"""benchmarks/aec_steps.py, the callgrind workload: it runs the steps it is asked for and
refuses bad counts with a one-line usage error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "aec_steps.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120
    )


def test_runs_a_seeded_workload():
    done = run("--steps", "50", "--players", "3")
    assert done.returncode == 0, done.stderr


def test_refuses_bad_counts():
    for args, message in (
        (("--players", "7"), "--players must be 2 to 6 (got 7)"),
        (("--steps", "-1"), "--steps must be >= 0 (got -1)"),
    ):
        done = run(*args)
        assert done.returncode == 2
        assert message in done.stderr
