"""benchmarks/pipelines.py trains each run under an interpreter that has its library, once per
training seed, judges every saved model itself on an evaluation seed it draws (never a training
seed), and writes the JSON and the tables; a run whose library no interpreter has is a row saying
so, not a failure. (A short budget: the learning targets are the benchmark's default run, not a
test.)"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def pipelines(*flags: str, timeout: float) -> subprocess.CompletedProcess:
    """``python benchmarks/pipelines.py FLAGS`` from the project root, its output captured."""
    return subprocess.run(
        [sys.executable, "benchmarks/pipelines.py", *flags],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs the vector extra")
def test_the_benchmark_runs_every_seed_judges_on_its_own_seed_and_reports_what_it_cannot_run(
    tmp_path,
):
    report = tmp_path / "pipelines.json"
    short = "--steps 1024 --envs 64 --n-steps 16 --eval-every 0 --final-deals 2"
    absent = next(
        name
        for name, module in (("agilerl_ppo", "agilerl"), ("rllib_ppo", "ray"))
        if importlib.util.find_spec(module) is None
    )
    done = pipelines(
        *("--only", "cleanrl_ppo", absent, "--seeds", "3", "4", "--eval-deals", "2"),
        *("--runs", str(tmp_path / "runs"), "--json", str(report)),
        *("--example-args", short),
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    written = json.loads(report.read_text())
    assert written["eval_seed"] not in (3, 4) and written["eval_deals"] == 2
    ran, skipped = written["results"]["cleanrl_ppo"], written["results"][absent]
    assert [row["seed"] for row in ran] == [3, 4]
    for row in ran:
        assert row["status"] == "ok" and row["run"] == "cleanrl_ppo"
        assert row["vs_greedy"]["games"] == row["vs_random"]["games"] == 4
        assert row["target"]["wall_within_15_min"] and row["measured_wall_seconds"] > 0
        seed_dir = tmp_path / "runs" / "cleanrl_ppo_p2" / f"seed{row['seed']}"
        assert Path(row["model"]) == seed_dir / "model.safetensors"
        assert "--seed" in row["command"]
    assert skipped[0]["status"].startswith("not run: no --python has")
    assert "| `python examples/cleanrl_ppo.py --seed 3 --steps 1024" in done.stdout
    assert f"| {absent} |" in done.stdout
    assert "| cleanrl_ppo | 3, 4 |" in done.stdout  # the per-run summary with the worst seed


def test_an_evaluation_seed_that_is_also_a_training_seed_is_refused(tmp_path):
    done = pipelines(
        *("--only", "cleanrl_ppo", "--seeds", "0", "1", "--eval-seed", "1"),
        *("--json", str(tmp_path / "x.json")),
        timeout=120,
    )
    assert done.returncode != 0 and "also a training seed" in done.stderr
    assert not (tmp_path / "x.json").exists()
