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


def test_tianshou_ppo(tmp_path):
    _needs("tianshou")
    from agents.evaluation import evaluate
    from agents.policy import load_policy_agent

    model = tmp_path / "ts.safetensors"
    out = _run(
        "tianshou_ppo.py",
        *("--steps", "1024", "--envs", "8", "--rollout", "64", "--minibatch", "256"),
        *("--eval-every", "512", "--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 1024 and out["illegal_moves"] == 0
    assert out["vs_greedy"]["games"] == 4 and out["vs_random"]["games"] == 4
    assert model.exists() and Path(out["model"]) == model
    load_policy_agent(str(model))
    assert evaluate([str(model), "random"], deals=2).games == 4
    rows = (tmp_path / "ts_log.csv").read_text().splitlines()
    assert len(rows) >= 3  # the header, the curve point at 512 and the final row
    assert (tmp_path / "ts_curve.png").exists() and (tmp_path / "ts_summary.json").exists()


def test_torchrl_ppo():
    _needs("torchrl")
    out = _run("torchrl_ppo.py", "--frames", "800", "--batch", "400", "--eval-games", "2")
    assert out["frames"] == 800 and out["train_decisions"] == 800  # one seat acts per frame
    # the training loop ran: 2 batches x 4 epochs x 2 minibatches of PPO, and the weights moved
    assert out["ppo_updates"] == 16 and out["param_change"] > 0
    assert out["decisions"] > out["train_decisions"]  # the evaluation games were played
    assert 0 <= out["win_rate_before"] <= 1 and 0 <= out["win_rate_after"] <= 1
    assert out["illegal_moves"] == 0


def test_agilerl_dqn():
    _needs("agilerl")
    out = _run("agilerl_dqn.py", "--steps", "400", "--eval-games", "2")
    assert out["train_decisions"] >= 400 and out["decisions"] > out["train_decisions"]
    assert out["illegal_moves"] == 0
