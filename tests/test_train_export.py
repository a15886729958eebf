"""The helpers any training pipeline uses (agents/training/export.py and eval_curve.py): a
torch MLP written as a model file that evaluate.py and the terminal game load, playing the
same logits; the evaluation curve against greedy and random; neither imports
stable-baselines3."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from agents.policies.convert import save_sb3_policy
from agents.policies.features import PairFeatures, extra_inputs
from agents.policies.policy import load_policy_agent
from agents.training.eval_curve import EVAL_COLUMNS, EvaluationCurve, evaluate_vs
from agents.training.export import export_mlp, export_sb3_policy
from trash_env.observation import observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv

ROOT = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def _actor(inputs: int, activation: type = nn.Tanh, seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(inputs, 32), activation(), nn.Linear(32, 16), activation(), nn.Linear(16, 13)
    )


def _observations(players: int, count: int = 20) -> list[np.ndarray]:
    env = TrashSoloEnv(num_players=players, opponents=["greedy"])
    obs, _ = env.reset(seed=3)
    seen = []
    rng = np.random.default_rng(0)
    while len(seen) < count:
        seen.append(obs)
        obs, _, done, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if done or truncated:
            obs, _ = env.reset()
    return seen


@pytest.mark.parametrize(
    ("players", "features", "activation"), [(2, "obs", nn.Tanh), (3, "pairs", nn.ReLU)]
)
def test_an_exported_mlp_plays_the_logits_of_the_torch_network(
    tmp_path, players, features, activation
):
    rules = Rules(num_players=players)
    size = observation_size(players)
    actor = _actor(size + extra_inputs(features, players), activation)
    path = export_mlp(
        tmp_path / "m.safetensors", actor, rules=rules, features=features, info={"timesteps": 5}
    )
    agent = load_policy_agent(str(path))
    assert agent.sidecar["network"]["features"] == features
    assert agent.sidecar["timesteps"] == 5 and agent.sidecar["rules"] == rules.to_dict()
    extra = PairFeatures(players) if features == "pairs" else None
    for obs in _observations(players):
        x = obs if extra is None else extra(obs)
        with torch.no_grad():
            expected = actor(torch.as_tensor(x, dtype=torch.float32)).numpy()
        assert np.allclose(agent.logits(obs), expected, atol=1e-5)


def test_plain_arrays_export_as_the_same_network(tmp_path):
    """A JAX or numpy pipeline's ``(weight, bias)`` arrays write the model file the same
    torch layers write: same tensors, same logits."""
    players, features = 2, "pairs"
    actor = _actor(observation_size(players) + extra_inputs(features, players))
    arrays = [
        (layer.weight.detach().numpy(), layer.bias.detach().numpy())
        for layer in actor
        if isinstance(layer, nn.Linear)
    ]
    rules = Rules(num_players=players)
    from_torch = load_policy_agent(
        str(export_mlp(tmp_path / "t.safetensors", actor, rules=rules, features=features))
    )
    from_arrays = load_policy_agent(
        str(
            export_mlp(
                tmp_path / "a.safetensors",
                arrays,
                rules=rules,
                features=features,
                activation="tanh",
            )
        )
    )
    assert from_arrays.sidecar["network"] == from_torch.sidecar["network"]
    for obs in _observations(players):
        assert np.array_equal(from_arrays.logits(obs), from_torch.logits(obs))
    with pytest.raises(ValueError, match="do not make a linear layer"):
        export_mlp(tmp_path / "bad.safetensors", [arrays[0], arrays[2]], rules=rules)


def test_a_list_of_layers_with_a_critic_and_the_cli_loaders(tmp_path):
    size = observation_size(2)
    layers = [nn.Linear(size, 8), nn.Linear(8, 13)]
    value = [nn.Linear(size, 4), nn.Linear(4, 1)]
    path = export_mlp(tmp_path / "m.safetensors", layers, activation="relu", value=value)
    assert load_policy_agent(str(path)).sidecar["network"]["value_hidden"] == [4]
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "evaluate.py"),
            "--agents",
            str(path),
            "random",
            "--games",
            "4",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("actor", "kwargs", "message"),
    [
        (
            lambda n: _actor(n + 1),
            {},
            "reads 154 inputs, but 2-player observations with features 'obs' have 153",
        ),
        (
            lambda n: nn.Sequential(
                nn.Linear(n, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 13)
            ),
            {},
            "mixes activations",
        ),
        (
            lambda n: nn.Sequential(nn.Linear(n, 8), nn.Dropout(), nn.Linear(8, 13)),
            {},
            "holds a Dropout",
        ),
        (lambda n: nn.Sequential(nn.Linear(n, 12)), {}, "actions must be 13"),
        (lambda n: "not a network", {}, "must be an nn.Sequential"),
        (lambda n: _actor(n), {"features": "pixels"}, "features must be one of"),
    ],
)
def test_what_cannot_be_exported_is_a_clear_error(tmp_path, actor, kwargs, message):
    with pytest.raises(ValueError, match=message):
        export_mlp(tmp_path / "m.safetensors", actor(observation_size(2)), **kwargs)
    assert not (tmp_path / "m.safetensors").exists()


def test_train_saves_through_the_exporter_byte_for_byte_as_before(tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.training.config import TrainConfig, settle
    from agents.training.run import policy_kwargs

    model = MaskablePPO(
        "MlpPolicy",
        TrashSoloEnv(),
        policy_kwargs=policy_kwargs(settle(TrainConfig(vec="dummy"))),
        seed=1,
        device="cpu",
    )
    from agents.policies.model_file import trained_for

    info = {
        "num_players": 2,
        "rules": Rules().to_dict(),
        "trained_for": trained_for(Rules()),
        "timesteps": 0,
    }
    export_sb3_policy(model, tmp_path / "a.safetensors", info)
    save_sb3_policy(model, tmp_path / "b.safetensors", info)
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()


def test_the_evaluation_curve_of_a_callable_and_of_a_model_file(tmp_path):
    size = observation_size(2)
    actor = _actor(size)
    path = export_mlp(tmp_path / "m.safetensors", actor)

    def act(obs, mask):
        with torch.no_grad():
            logits = actor(torch.as_tensor(obs, dtype=torch.float32))
        return int(
            torch.where(torch.as_tensor(mask, dtype=torch.bool), logits, -torch.inf).argmax()
        )

    curve = EvaluationCurve(tmp_path / "curve.csv", deals=6, seed=2)
    by_callable = curve.record(0, act)
    by_file = curve.record(0, path)
    for row in (by_callable, by_file):
        assert row["eval_games"] == row["random_games"] == 12
        assert 0 <= row["eval_ci_low"] <= row["eval_win_rate"] <= row["eval_ci_high"] <= 1
    assert {k: by_callable[k] for k in EVAL_COLUMNS if k != "eval_seconds"} == {
        k: by_file[k] for k in EVAL_COLUMNS if k != "eval_seconds"
    }  # the same policy
    assert evaluate_vs(path, "greedy", 6, 2)["win_rate"] == pytest.approx(
        by_file["eval_win_rate"], abs=1e-4
    )
    rows = list(csv.DictReader((tmp_path / "curve.csv").open()))
    assert [list(r)[0] for r in rows] == ["timesteps", "timesteps"] and len(rows) == 2
    assert curve.plot().stat().st_size > 1000
    with pytest.raises(ValueError, match="workers must be 1 for a callable"):
        EvaluationCurve(tmp_path / "c2.csv", deals=2, workers=2).record(0, act)


def test_a_callable_recorded_at_many_points_is_one_agent(tmp_path):
    from trash_env.agent import known_agents

    def act(obs, mask):
        return int(np.flatnonzero(mask)[0])

    curve = EvaluationCurve(tmp_path / "curve.csv", deals=1)
    curve.record(0, act)
    before = set(known_agents())
    curve.record(1, act)
    curve.record(2, act)
    assert set(known_agents()) == before


def test_the_pipeline_helpers_import_no_learning_library():
    code = (
        "import sys, agents.training, agents.training.export, agents.training.eval_curve, "
        "agents.training.pipeline, "
        "agents.training.config; bad = [m for m in sys.modules if m.split('.')[0] in "
        "('stable_baselines3', 'sb3_contrib')]; print(bad); "
        "sys.exit(1 if bad else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr
