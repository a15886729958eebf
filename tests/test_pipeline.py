"""The basics every pipeline example shares (agents/training/pipeline.py): the flags, the
curve points at ``--eval-every`` marks, the model file that plays as the network trained on
``observation="pairs"``, the final evaluation and the summary."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import evaluate_model
from torch import nn

from agents.policies.policy import load_policy_agent
from agents.training.pipeline import PipelineRun, example_parser, real_number, whole_number
from trash_env.observation import observation_size
from trash_env.solo import TrashSoloEnv

ROOT = Path(__file__).resolve().parents[1]


def _args(tmp_path: Path, *flags: str):
    parser = example_parser("demo", "a demo", steps=100, eval_every=30)
    return parser.parse_args(
        ["--out", str(tmp_path / "run" / "model.safetensors"), "--eval-deals", "2", *flags]
    )


def _actor(players: int = 2) -> nn.Sequential:
    torch.manual_seed(0)
    width = TrashSoloEnv(num_players=players, observation="pairs").observation_space.shape[0]
    return nn.Sequential(nn.Linear(width, 16), nn.Tanh(), nn.Linear(16, 13))


def test_the_model_file_plays_the_net_trained_on_the_pairs_observation(tmp_path):
    actor = _actor(3)
    args = _args(tmp_path, "--players", "3", "--final-deals", "1")
    path = PipelineRun(args, "demo", "torch").export(10, actor)
    agent = load_policy_agent(str(path))
    assert agent.sidecar["network"]["features"] == "pairs"
    assert agent.sidecar["library"] == "torch" and agent.sidecar["timesteps"] == 10
    env = TrashSoloEnv(num_players=3, opponents=["greedy"], observation="pairs")
    obs, _ = env.reset(seed=1)
    plain = observation_size(3)
    rng = np.random.default_rng(0)
    for _ in range(40):
        with torch.no_grad():
            expected = actor(torch.as_tensor(obs)).numpy()
        assert np.allclose(agent.logits(obs[:plain]), expected, atol=1e-5)
        obs, _, done, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if done or truncated:
            obs, _ = env.reset()


def test_a_run_logs_its_curve_points_then_the_final_evaluation(tmp_path, capsys):
    args = _args(tmp_path, "--final-deals", "3")
    run = PipelineRun(args, "demo", "torch")
    actor = _actor()
    points = [s for s in (10, 29, 31, 45, 95, 100) if run.progress(s, actor) is not None]
    assert points == [31, 95]  # past the 30 and 90 marks; 60 was skipped over; 100 is final
    summary = run.finish(100, actor, illegal_moves=0, note="x")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(last) == summary
    assert json.loads(run.summary_path.read_text()) == summary
    assert summary["steps"] == 100 and summary["note"] == "x" and summary["illegal_moves"] == 0
    # training's share leaves the three points' evaluations out
    assert 0 <= summary["train_seconds"] < summary["wall_seconds"]
    assert 0 <= summary["train_cpu_seconds"] < summary["eval_seconds"]
    assert summary["vs_greedy"]["games"] == 6 and summary["vs_random"]["games"] == 6
    low, high = summary["vs_greedy"]["ci95"]
    assert low <= summary["vs_greedy"]["win_rate"] <= high
    with open(summary["log"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["timesteps"]) for r in rows] == [31, 95, 100]
    assert [int(r["eval_games"]) for r in rows] == [4, 4, 6]
    assert Path(summary["curve"]).stat().st_size > 1000
    # A later run at the same --out starts its own log.
    PipelineRun(args, "demo", "torch").finish(5, actor)
    with open(summary["log"], newline="") as handle:
        assert [r["timesteps"] for r in csv.DictReader(handle)] == ["5"]


def test_the_model_file_enters_evaluate_py_and_the_terminal_game(tmp_path):
    path = PipelineRun(_args(tmp_path), "demo", "torch").export(1, _actor())
    done = evaluate_model(path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert path.name in done.stdout
    played = subprocess.run(  # the model plays first (seat 1); the user quits at the prompt
        [sys.executable, "-m", "agents.play", "--opponents", str(path), "--seed", "1"]
        + ["--no-log", "--seat", "2"],
        input="q\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert played.returncode == 0, played.stdout[-2000:] + played.stderr[-2000:]
    assert "you are seat 2 of 2" in played.stdout and "Goodbye" in played.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--steps", "0"], "--steps: must be from 1"),
        (["--players", "7"], "--players: must be from 2 to 6"),
        (["--eval-deals", "x"], "--eval-deals: expected a whole number"),
    ],
)
def test_bad_flags_are_usage_errors_naming_the_flag(tmp_path, capsys, flags, message):
    with pytest.raises(SystemExit) as stopped:
        _args(tmp_path, *flags)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_an_output_path_that_is_not_a_model_file_is_refused_before_training(tmp_path):
    args = _args(tmp_path)
    args.out = str(tmp_path / "model.zip")
    with pytest.raises(ValueError, match=r"--out must end in \.safetensors"):
        PipelineRun(args, "demo", "torch")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "--lr: must be above 0 to 1, got 0"),
        ("nan", "--lr: must be above 0 to 1, got nan"),
        ("fast", "--lr: expected a number, got 'fast'"),
    ],
)
def test_an_example_s_own_number_flags_are_checked_the_same_way(capsys, value, message):
    parser = example_parser("demo", "a demo", steps=100, eval_every=30)
    parser.add_argument("--lr", type=real_number(0, 1, low_open=True), default=1e-3)
    parser.add_argument("--envs", type=whole_number(1, 4096), default=8)
    assert parser.parse_args(["--lr", "0.5", "--envs", "4096"]).lr == 0.5
    with pytest.raises(SystemExit):
        parser.parse_args(["--lr", value])
    assert message in capsys.readouterr().err


def test_an_example_refuses_a_bad_flag_before_it_trains():
    done = subprocess.run(
        [sys.executable, "examples/cleanrl_ppo.py", "--envs", "0"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 2 and "--envs: must be from 1 to 4,096, got 0" in done.stderr
