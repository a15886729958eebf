"""Every pipeline example in examples/ runs with a short budget, respects the action masks
(0 illegal moves) and prints its JSON summary. Marked ``integration``: each skips when its
library is absent (CI installs them in their own venvs and runs ``pytest -m integration``).

The examples run as scripts in a subprocess, as a user runs them (Ray and RLlib start actors
and threads that must not outlive the test)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.integration


def _needs(*modules: str) -> None:
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a dotted name whose parent package is absent
            found = False
        if not found:
            pytest.skip(f"{module} is not installed (an optional extra, see docs/integrations.md)")


def _run(script: str, *args: str, timeout: float = 900) -> dict:
    env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    last = [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
    return json.loads(last)


def test_cleanrl_ppo():
    _needs("torch")
    out = _run("cleanrl_ppo.py", "--steps", "600", "--rollout", "300", "--eval-games", "2")
    assert out["train_decisions"] >= 600 and out["decisions"] > out["train_decisions"]
    assert out["illegal_moves"] == 0


def test_rllib_ppo_two_env_runners():
    _needs("ray.rllib", "torch")
    out = _run(
        "rllib_ppo.py",
        "--iterations",
        "1",
        "--batch",
        "400",
        "--env-runners",
        "2",
        "--episode",
        "round",
    )
    assert out["env_runners"] == 2 and out["env_steps"] >= 400
    assert out["games"] >= 1  # the illegal-move counter saw finished games
    assert out["illegal_moves"] == 0


def test_tianshou_dqn():
    _needs("tianshou")
    out = _run("tianshou_dqn.py", "--steps", "512", "--eval-games", "2", "--envs", "2")
    assert out["train_steps"] >= 512
    assert out["illegal_moves"] == 0


def test_torchrl_ppo(tmp_path):
    _needs("torchrl", "numba")
    out_path = tmp_path / "model.safetensors"
    out = _run(
        "torchrl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--rollout", "16", "--eval-every", "1024"),
        *("--eval-deals", "2", "--final-deals", "2", "--out", str(out_path)),
    )
    assert out["steps"] == 2048 and out["illegal_moves"] == 0  # 2 batches of 64 x 16
    assert out["vs_greedy"]["games"] == 4 and out["vs_random"]["games"] == 4
    from agents.policy import load_policy_agent
    from agents.training.eval_curve import evaluate_vs

    assert out_path.exists() and load_policy_agent(str(out_path)) is not None
    assert evaluate_vs(str(out_path), "random", 2, seed=0)["games"] == 4
    rows = (tmp_path / "model_log.csv").read_text().splitlines()
    assert len(rows) == 3  # the header, the curve point at 1024 and the final row
    assert (tmp_path / "model_curve.png").exists() and (tmp_path / "model_summary.json").exists()


def test_agilerl_dqn():
    _needs("agilerl")
    out = _run("agilerl_dqn.py", "--steps", "400", "--eval-games", "2")
    assert out["train_decisions"] >= 400 and out["decisions"] > out["train_decisions"]
    assert out["illegal_moves"] == 0
