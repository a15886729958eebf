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


def test_cleanrl_ppo(tmp_path):
    _needs("torch", "numba")
    model = tmp_path / "cleanrl.safetensors"
    out = _run(
        "cleanrl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16"),
        *("--eval-every", "1024", "--eval-deals", "2", "--final-deals", "2"),
        *("--out", str(model)),
    )
    # two rollouts of 64 x 16 decisions, a curve point after the first, then the final row
    assert out["steps"] == out["train_decisions"] == 2048
    assert out["illegal_moves"] == 0
    assert out["library"] == "torch" and out["vs_greedy"]["games"] == 4
    assert 0 <= out["vs_random"]["win_rate"] <= 1
    assert model.exists() and Path(out["model"]) == model
    rows = (tmp_path / "cleanrl_log.csv").read_text().splitlines()
    assert len(rows) == 3  # header, the point at 1024 decisions, the final evaluation
    assert (tmp_path / "cleanrl_curve.png").exists()
    assert json.loads((tmp_path / "cleanrl_summary.json").read_text())["steps"] == 2048
    # the model file is an agent like any other: it loads and evaluates
    done = subprocess.run(
        [sys.executable, "evaluate.py", "--agents", str(model), "random", "--deals", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _check_rllib_outputs(out: dict, model: Path) -> None:
    from agents.policy import load_policy_agent

    assert out["illegal_moves"] == 0 and out["games"] >= 1  # the counter saw finished games
    assert model.is_file() and out["model"] == str(model)
    load_policy_agent(str(model))
    assert model.with_name("model_log.csv").read_text().count("\n") >= 2  # header + a row
    assert model.with_name("model_curve.png").is_file()
    assert out["vs_greedy"]["games"] == 4 and out["vs_random"]["games"] == 4  # 2 deals each
    done = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--agents", str(model), "random"]
        + ["--deals", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_rllib_ppo_vs_greedy(tmp_path):
    _needs("ray.rllib", "torch")
    model = tmp_path / "model.safetensors"
    out = _run(
        "rllib_ppo.py",
        *("--steps", "1024", "--batch", "512", "--batch-size", "256", "--envs", "4"),
        *("--eval-every", "512", "--eval-deals", "2", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 1024 and out["opponents"] == "greedy"
    _check_rllib_outputs(out, model)


def test_rllib_ppo_self_play_two_env_runners(tmp_path):
    _needs("ray.rllib", "torch")
    model = tmp_path / "model.safetensors"
    out = _run(
        "rllib_ppo.py",
        *("--opponents", "self", "--env-runners", "2", "--steps", "800", "--batch", "800"),
        *("--batch-size", "400", "--eval-every", "0", "--final-deals", "2", "--out", str(model)),
    )
    assert out["steps"] >= 800 and out["env_runners"] == 2
    _check_rllib_outputs(out, model)


def test_tianshou_ppo(tmp_path):
    _needs("tianshou")
    from agents.evaluation import evaluate
    from agents.policy import load_policy_agent

    model = tmp_path / "ts.safetensors"
    out = _run(
        "tianshou_ppo.py",
        *("--steps", "1024", "--envs", "8", "--n-steps", "64", "--batch-size", "256"),
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


def test_torchrl_ppo(tmp_path):
    _needs("torchrl", "numba")
    out_path = tmp_path / "model.safetensors"
    out = _run(
        "torchrl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16", "--eval-every", "1024"),
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


def test_agilerl_ppo(tmp_path):
    _needs("agilerl")
    model = tmp_path / "agilerl.safetensors"
    out = _run(
        "agilerl_ppo.py",
        *("--steps", "2048", "--envs", "64", "--n-steps", "16", "--batch-size", "256"),
        *("--eval-every", "1024", "--eval-deals", "2", "--final-deals", "2"),
        *("--out", str(model)),
    )
    assert out["steps"] == 2048 and out["illegal_moves"] == 0
    assert out["vs_greedy"]["games"] == 4 and out["vs_random"]["games"] == 4
    assert model.exists() and Path(out["model"]) == model
    rows = (tmp_path / "agilerl_log.csv").read_text().splitlines()
    assert len(rows) == 3  # the header, the curve point at 1,024 decisions, the final row
    assert (tmp_path / "agilerl_curve.png").exists()
    done = subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), "--agents", str(model), "random"]
        + ["--deals", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=dict(os.environ, PYTHONWARNINGS="ignore"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
