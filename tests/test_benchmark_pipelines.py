"""benchmarks/pipelines.py runs each example under an interpreter that has its library, keeps
the example's own figures and writes the JSON and the table; an example whose library no
interpreter has is a row saying so, not a failure. (A short budget: the learning targets are
the benchmark's default run, not a test.)"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs the vector extra")
def test_the_benchmark_runs_an_example_and_reports_one_it_cannot_run(tmp_path):
    report = tmp_path / "pipelines.json"
    short = "--steps 1024 --envs 64 --n-steps 16 --eval-every 0 --final-deals 2"
    absent = next(
        name
        for name, module in (("agilerl_ppo", "agilerl"), ("rllib_ppo", "ray"))
        if importlib.util.find_spec(module) is None
    )
    done = subprocess.run(
        [
            sys.executable,
            "benchmarks/pipelines.py",
            *("--only", "cleanrl_ppo", absent),
            *("--runs", str(tmp_path / "runs"), "--json", str(report)),
            *("--example-args", short),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran, skipped = json.loads(report.read_text())["results"]
    assert ran["status"] == "ok" and ran["example"] == "cleanrl_ppo"
    assert ran["steps"] == 1024 and ran["illegal_moves"] == 0
    assert ran["vs_greedy"]["games"] == ran["vs_random"]["games"] == 4
    assert ran["target"]["wall_within_15_min"] and ran["measured_wall_seconds"] > 0
    assert Path(ran["model"]) == tmp_path / "runs" / "cleanrl_ppo" / "model.safetensors"
    assert skipped["status"].startswith("not run: no --python has")
    assert "| `python examples/cleanrl_ppo.py --steps 1024" in done.stdout
    assert f"| {absent} |" in done.stdout
