"""train.py and trained policies (agents/policy.py): a training smoke run that saves, reloads and
plays only legal moves; resume; the shipped pretrained model; clear errors for bad model files."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import make_agent
from agents.evaluation import evaluate
from agents.policy import PRETRAINED, PolicyAgent, load_policy_agent, read_sidecar
from trash_env.observation import OBS_VERSION, encode_observation, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import train  # noqa: E402

SMOKE = [
    "--timesteps", "2048", "--envs", "2", "--n-steps", "256", "--batch-size", "128",
    "--epochs", "2", "--episode", "round", "--eval-every", "1024", "--eval-deals", "10",
    "--final-deals", "20", "--checkpoint-every", "1024", "--snapshot-every", "1024",
    "--pool-size", "2", "--no-progress", "--workers", "1",
    "--opponents", "random", "greedy", "self",
    "--imitate", "greedy", "--imitate-samples", "6000", "--imitate-epochs", "10",
]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("smoke") / "model.zip"
    assert train.main(SMOKE + ["--out", str(out)]) == 0
    return out


def play_legal_games(agent: PolicyAgent, episodes: int, **rules) -> int:
    """Play the agent in the solo env where an illegal action raises; return its wins."""
    env = TrashSoloEnv(opponents=["greedy"], illegal="raise", **rules)
    wins = 0
    for seed in range(episodes):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            action = agent.act(obs, mask, None)
            assert mask[action]
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += info["won"]
    return wins


def test_smoke_run_saves_a_model_that_reloads_and_plays_legal_moves(smoke_run):
    sidecar = json.loads(smoke_run.with_suffix(".json").read_text())
    assert sidecar["obs_version"] == OBS_VERSION
    assert sidecar["observation_size"] == observation_size(2)
    assert sidecar["timesteps"] >= 2048 and sidecar["seed"] == 0
    assert sidecar["rules"] == Rules(episode="round").to_dict()
    assert sidecar["imitate"] == "greedy" and sidecar["imitation"]["teacher_agreement"] > 0.8
    for opponent in ("random", "greedy"):
        figures = sidecar["evaluation"][opponent]
        assert figures["games"] == 40 and 0 <= figures["ci95"][0] <= figures["win_rate"]
    rows = list(csv.DictReader((smoke_run.parent / "model_log.csv").open()))
    assert [int(r["timesteps"]) for r in rows if r["eval_win_rate"]] == [0, 1024, 2048]
    assert (smoke_run.parent / "model_curve.png").stat().st_size > 1000
    checkpoints = sorted((smoke_run.parent / "model_checkpoints").glob("*.zip"))
    assert [c.name for c in checkpoints] == ["step_000001024.zip", "step_000002048.zip"]
    snapshots = sorted((smoke_run.parent / "model_pool").glob("snapshot_*.zip"))
    assert len(snapshots) == 3  # the untrained policy, then one every 1024 steps
    agent = load_policy_agent(str(smoke_run), seed=0)
    play_legal_games(agent, 15, episode="round")
    sampling = make_agent(f"{smoke_run}:deterministic=false", seed=1)
    assert isinstance(sampling, PolicyAgent) and not sampling.deterministic
    play_legal_games(sampling, 5)  # whole games too


def test_numpy_actor_matches_torch(smoke_run):
    import torch

    agent = load_policy_agent(str(smoke_run))
    env = TrashSoloEnv(episode="round")
    obs, _ = env.reset(seed=3)
    with torch.no_grad():
        dist = agent.model.policy.get_distribution(torch.as_tensor(obs[None]))
        expected = dist.distribution.logits[0].numpy()
    logits = agent.logits(obs)
    # Categorical normalises its logits: compare up to a constant.
    assert np.allclose(logits - logits.max(), expected - expected.max(), atol=1e-4)


def test_resume_continues_from_the_checkpoint_step_count(smoke_run, tmp_path, capsys):
    checkpoint = smoke_run.parent / "model_checkpoints" / "step_000001024.zip"
    out = tmp_path / "resumed.zip"
    args = SMOKE + ["--out", str(out), "--resume", str(checkpoint), "--timesteps", "1536",
                    "--eval-every", "0"]
    assert train.main(args) == 0
    assert "training 512 steps (1024 done)" in capsys.readouterr().out
    assert json.loads(out.with_suffix(".json").read_text())["timesteps"] == 1536


def test_pretrained_model_loads_and_beats_random():
    agent = make_agent("pretrained", seed=0)
    assert agent.name == "pretrained" and agent.num_players == 2
    report = evaluate([str(PRETRAINED), "random"], rules=Rules(episode="round"), deals=150,
                      seed=7)
    figures = report.agents[str(PRETRAINED)]
    assert figures["games"] == 300
    assert figures["ci95"][0] > 0.5, figures


def _copy_model(smoke_run: Path, tmp_path: Path, name: str = "copy") -> Path:
    target = tmp_path / f"{name}.zip"
    shutil.copy(smoke_run, target)
    shutil.copy(smoke_run.with_suffix(".json"), target.with_suffix(".json"))
    return target


def test_bad_model_files_fail_with_clear_errors(smoke_run, tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_policy_agent(str(tmp_path / "missing.zip"))
    corrupt = _copy_model(smoke_run, tmp_path, "corrupt")
    corrupt.write_bytes(corrupt.read_bytes()[:300])
    with pytest.raises(ValueError, match="corrupt|could not be loaded"):
        load_policy_agent(str(corrupt))
    garbage = _copy_model(smoke_run, tmp_path, "garbage")
    garbage.write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pytest.raises(ValueError, match="corrupt|could not be loaded"):
        make_agent(str(garbage))
    nosidecar = tmp_path / "nosidecar.zip"
    shutil.copy(smoke_run, nosidecar)
    with pytest.raises(ValueError, match="no sidecar"):
        load_policy_agent(str(nosidecar))
    old = _copy_model(smoke_run, tmp_path, "old")
    data = json.loads(old.with_suffix(".json").read_text())
    old.with_suffix(".json").write_text(json.dumps({**data, "obs_version": OBS_VERSION - 1}))
    with pytest.raises(ValueError, match="observation version"):
        load_policy_agent(str(old))
    wrong = _copy_model(smoke_run, tmp_path, "wrong")
    wrong.with_suffix(".json").write_text(
        json.dumps({**data, "num_players": 3, "observation_size": observation_size(3)})
    )
    with pytest.raises(ValueError, match="do not belong together"):
        load_policy_agent(str(wrong))
    broken = _copy_model(smoke_run, tmp_path, "broken")
    broken.with_suffix(".json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_sidecar(broken)
    with pytest.raises(ValueError, match="unknown option"):
        make_agent(f"{smoke_run}:temperature=2")
    with pytest.raises(ValueError, match="true or false"):
        make_agent(f"{smoke_run}:deterministic=maybe")


def test_a_two_player_model_refuses_another_table_size(smoke_run):
    agent = load_policy_agent(str(smoke_run))
    env = TrashSoloEnv(num_players=3)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="trained for 2 players"):
        agent.act(obs, info["action_mask"], None)
    with pytest.raises(ValueError, match="2 players"):
        agent.act(encode_observation(env.game, 0), info["action_mask"], None)


def test_resume_refuses_a_checkpoint_for_another_layout(smoke_run, tmp_path, capsys):
    old = _copy_model(smoke_run, tmp_path, "old")
    data = json.loads(old.with_suffix(".json").read_text())
    old.with_suffix(".json").write_text(json.dumps({**data, "obs_version": OBS_VERSION + 1}))
    code = train.main(SMOKE + ["--out", str(tmp_path / "x.zip"), "--resume", str(old)])
    assert code == 2 and "observation version" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--net", "128,x"], "--net"),
        (["--timesteps", "0"], "--timesteps"),
        (["--out", "model.pt"], "--out"),
        (["--wilds", "kings", "--free-draws", "3"], "free_draws"),
        (["--resume", "nowhere.zip"], "not found"),
        (["--opponents", "nobody"], "unknown agent"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(argv, message, tmp_path, capsys):
    assert train.main(argv + ["--out", str(tmp_path / "m.zip"), "--no-progress"]
                      if "--out" not in argv else argv) == 2
    assert message in capsys.readouterr().err
