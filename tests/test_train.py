"""train.py and trained policies (agents/policies/policy.py): a training smoke run that saves,
reloads and
plays only legal moves; exact resume from a checkpoint (bit-identical weights) on the batched
(default), dummy and subprocess envs, a damaged last checkpoint skipped, a killed run that
leaves the previous model whole; the choice of the vec path and its defaults; the shipped
pretrained model. Bad model files and flags: tests/test_bad_input_models.py."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.bots.base import make_agent
from agents.evaluation import evaluate
from agents.policies.model_file import load_tensors
from agents.policies.policy import PRETRAINED, PolicyAgent, load_policy_agent
from agents.training.checkpoint import read_checkpoint
from agents.training.cli import build_parser, config_of, main
from agents.training.config import PER_PLAYERS, settle
from agents.training.eval_curve import evaluate_vs
from agents.training.schedules import next_eval_after
from trash_env.observation import OBS_VERSION, encode_observation, observation_size
from trash_env.rules import Rules
from trash_env.solo import TrashSoloEnv

TRAIN_PY = Path(__file__).resolve().parents[1] / "train.py"

SMOKE = [
    "--timesteps",
    "2048",
    "--envs",
    "2",
    "--n-steps",
    "256",
    "--batch-size",
    "128",
    "--epochs",
    "2",
    "--episode",
    "round",
    "--eval-every",
    "1024",
    "--eval-deals",
    "10",
    "--final-deals",
    "20",
    "--checkpoint-every",
    "1024",
    "--snapshot-every",
    "1024",
    "--pool-size",
    "2",
    "--no-progress",
    "--workers",
    "1",
    "--opponents",
    "random",
    "greedy",
    "self",
    "--imitate",
    "greedy",
    "--imitate-samples",
    "6000",
    "--imitate-epochs",
    "10",
]


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("smoke") / "model.safetensors"
    assert main(SMOKE + ["--out", str(out)]) == 0
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
    # at 0, after the first 512-step rollout (the early points 64-512 of --eval-every 1024),
    # then every 1024
    assert [int(r["timesteps"]) for r in rows if r["eval_win_rate"]] == [0, 512, 1024, 2048]
    assert (smoke_run.parent / "model_curve.png").stat().st_size > 1000
    folder = smoke_run.parent / "model_checkpoints"
    assert sorted(c.name for c in folder.glob("*.ckpt")) == [
        "step_000001024.ckpt",
        "step_000002048.ckpt",
    ]
    assert sorted(c.name for c in folder.glob("*.safetensors")) == [
        "step_000001024.safetensors",
        "step_000002048.safetensors",
    ]
    assert not list(smoke_run.parent.glob("*.zip")) and not list(folder.glob("*.zip"))
    snapshots = sorted((smoke_run.parent / "model_pool").glob("snapshot_*.safetensors"))
    # the untrained policy, then one after the update at 1024 (none at the end of training)
    assert [s.name for s in snapshots] == [
        "snapshot_000000000.safetensors",
        "snapshot_000001024.safetensors",
    ]
    agent = load_policy_agent(str(smoke_run), seed=0)
    play_legal_games(agent, 15, episode="round")
    sampling = make_agent(f"{smoke_run}:deterministic=false", seed=1)
    assert isinstance(sampling, PolicyAgent) and not sampling.deterministic
    play_legal_games(sampling, 5)  # whole games too


def _sb3_model_of_checkpoint(path: Path):
    """A stable-baselines3 model of the default network, reading the checkpoint's features,
    with its weights."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents.training.config import TrainConfig
    from agents.training.run import policy_kwargs

    state = read_checkpoint(path)
    model = MaskablePPO(
        "MlpPolicy",
        TrashSoloEnv(episode="round"),
        device="cpu",
        policy_kwargs=policy_kwargs(TrainConfig(features=state["flags"]["features"])),
    )
    tensors = state["tensors"]
    policy = {k[7:]: torch.from_numpy(v) for k, v in tensors.items() if k.startswith("policy/")}
    model.policy.load_state_dict(policy)
    return model


def test_numpy_actor_from_safetensors_matches_the_torch_policy(smoke_run):
    import torch

    folder = smoke_run.parent / "model_checkpoints"
    model = _sb3_model_of_checkpoint(folder / "step_000002048.ckpt")
    agent = load_policy_agent(str(folder / "step_000002048.safetensors"))
    tensors, sidecar = load_tensors(folder / "step_000002048.safetensors")
    assert sidecar["network"] == {
        "kind": "mlp",
        "inputs": 153,
        "hidden": [128, 128],
        "value_hidden": [128, 128],
        "activation": "tanh",
        "actions": 13,
        "features": "fits",
    }
    for name, value in model.policy.state_dict().items():  # every tensor, bit for bit
        assert np.array_equal(tensors[name], value.numpy()), name
    env = TrashSoloEnv(episode="round")
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(obs[None]))
            expected = dist.distribution.logits[0].numpy()
        logits = agent.logits(obs)
        # Categorical normalises its logits: compare up to a constant.
        assert np.allclose(logits - logits.max(), expected - expected.max(), atol=1e-4)


def test_resume_continues_from_the_checkpoint_step_count(smoke_run, tmp_path, capsys):
    checkpoint = smoke_run.parent / "model_checkpoints" / "step_000001024.ckpt"
    out = tmp_path / "resumed.safetensors"
    args = SMOKE + [
        "--out",
        str(out),
        "--resume",
        str(checkpoint),
        "--timesteps",
        "1536",
        "--eval-every",
        "0",
    ]
    assert main(args) == 0
    assert "training 512 steps (1024 done)" in capsys.readouterr().out
    assert json.loads(out.with_suffix(".json").read_text())["timesteps"] == 1536


def test_pretrained_model_loads_and_beats_random():
    agent = make_agent("pretrained", seed=0)
    assert agent.name == "pretrained" and agent.num_players == 2
    report = evaluate([str(PRETRAINED), "random"], rules=Rules(episode="round"), deals=150, seed=7)
    figures = report.agents[str(PRETRAINED)]
    assert figures["games"] == 300
    assert figures["ci95"][0] > 0.5, figures


def test_a_two_player_model_refuses_another_table_size(smoke_run):
    agent = load_policy_agent(str(smoke_run))
    env = TrashSoloEnv(num_players=3)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="trained for 2 players"):
        agent.act(obs, info["action_mask"], None)
    with pytest.raises(ValueError, match="2 players"):
        agent.act(encode_observation(env.game, 0), info["action_mask"], None)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--net", "128,x"], "--net"),
        (["--timesteps", "0"], "--timesteps"),
        (["--out", "model.pt"], "--out"),
        (["--out", "model.zip"], "no longer writes .zip"),
        (["--wilds", "kings", "--free-draws", "3"], "free_draws"),
        (["--resume", "nowhere.zip"], "not found"),
        (["--opponents", "nobody"], "unknown agent"),
    ],
)
def test_bad_options_exit_2_with_a_clear_message(argv, message, tmp_path, capsys):
    assert (
        main(
            argv + ["--out", str(tmp_path / "m.safetensors"), "--no-progress"]
            if "--out" not in argv
            else argv
        )
        == 2
    )
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------- exact resume

TINY = [  # 3 rollouts of 256 steps; a checkpoint and a self-play snapshot after each update
    "--vec",
    "dummy",
    "--envs",
    "2",
    "--n-steps",
    "128",
    "--batch-size",
    "64",
    "--epochs",
    "2",
    "--episode",
    "round",
    "--eval-every",
    "0",
    "--final-deals",
    "2",
    "--checkpoint-every",
    "256",
    "--snapshot-every",
    "256",
    "--pool-size",
    "2",
    "--no-progress",
    "--workers",
    "1",
    "--opponents",
    "random",
    "greedy",
    "self",
    "--imitate",
    "none",
    "--timesteps",
    "768",
]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "a.safetensors"
    assert main(TINY + ["--out", str(out)]) == 0
    return out


def _same_weights(a: Path, b: Path) -> list[str]:
    """Names of the tensors that differ (empty: bit-identical)."""
    first, _ = load_tensors(a)
    second, _ = load_tensors(b)
    assert set(first) == set(second)
    return [name for name in first if not np.array_equal(first[name], second[name])]


@pytest.mark.parametrize("step", [256, 512])
def test_resume_from_step_n_gives_the_uninterrupted_runs_weights_bit_for_bit(
    tiny_run, tmp_path, step
):
    checkpoint = tiny_run.parent / "a_checkpoints" / f"step_{step:09d}.ckpt"
    out = tmp_path / "b.safetensors"
    assert main(TINY + ["--out", str(out), "--resume", str(checkpoint)]) == 0
    assert _same_weights(tiny_run, out) == []
    # The checkpoints' own policies agree too, and were taken after their update: the
    # resumed run's checkpoint of step 768 is the uninterrupted one's.
    assert (
        _same_weights(
            tiny_run.parent / "a_checkpoints" / "step_000000768.safetensors",
            tmp_path / "b_checkpoints" / "step_000000768.safetensors",
        )
        == []
    )


def test_resume_skips_a_damaged_last_checkpoint_and_uses_the_previous_one(
    tiny_run, tmp_path, capsys
):
    folder = tmp_path / "a_checkpoints"
    shutil.copytree(tiny_run.parent / "a_checkpoints", folder)
    last = folder / "step_000000768.ckpt"
    last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])  # a torn write
    out = tmp_path / "b.safetensors"
    assert main(TINY + ["--out", str(out), "--resume", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "skipping checkpoint" in captured.err and "step_000000768.ckpt" in captured.err
    assert "damaged or truncated" in captured.err
    assert "resuming from" in captured.out and "step_000000512.ckpt" in captured.out
    assert _same_weights(tiny_run, out) == []  # from 512 to 768: the same weights again


def test_resume_refuses_flags_that_would_change_the_weights(tiny_run, tmp_path, capsys):
    checkpoint = tiny_run.parent / "a_checkpoints" / "step_000000256.ckpt"
    code = main(
        TINY
        + ["--out", str(tmp_path / "b.safetensors"), "--resume", str(checkpoint), "--lr", "0.0005"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "--lr 0.001 (given 0.0005)" in err  # the checkpoint's: train.py's default lr
    code = main(
        TINY
        + [
            "--out",
            str(tmp_path / "b.safetensors"),
            "--resume",
            str(checkpoint),
            "--features",
            "obs",
        ]
    )
    assert code == 2  # the checkpoint's network reads the fits features (2 players' default)
    assert "--features 'fits' (given 'obs')" in capsys.readouterr().err


def test_a_killed_run_leaves_the_previous_out_model_whole(tmp_path):
    out = tmp_path / "model.safetensors"
    shutil.copy(PRETRAINED, out)
    shutil.copy(PRETRAINED.with_suffix(".json"), out.with_suffix(".json"))
    before = out.read_bytes(), out.with_suffix(".json").read_bytes()
    args = [
        sys.executable,
        str(TRAIN_PY),
        "--out",
        str(out),
        "--timesteps",
        "100000",
        "--envs",
        "1",
        "--n-steps",
        "64",
        "--batch-size",
        "32",
        "--epochs",
        "1",
        "--checkpoint-every",
        "64",
        "--eval-every",
        "0",
        "--imitate",
        "none",
        "--opponents",
        "random",
        "--no-progress",
        "--episode",
        "round",
    ]
    process = subprocess.Popen(
        args,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 120
        folder = tmp_path / "model_checkpoints"
        while time.time() < deadline and len(list(folder.glob("*.ckpt"))) < 2:
            assert process.poll() is None, "train.py ended early"
            time.sleep(0.2)
        assert len(list(folder.glob("*.ckpt"))) >= 2, "no checkpoint within 120 s"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert (out.read_bytes(), out.with_suffix(".json").read_bytes()) == before
    assert load_policy_agent(str(out)).num_players == 2
    # What it wrote before dying is whole: every checkpoint is complete or absent.
    for path in folder.glob("*.ckpt"):
        read_checkpoint(path)


def test_exact_resume_also_holds_with_subprocess_envs(tmp_path):
    """The envs live in other processes there: the checkpoint fetches them through
    ``env_method`` and the resumed run rebuilds them inside its own workers."""
    flags = TINY[:-2] + ["--timesteps", "512", "--vec", "subproc"]
    first = tmp_path / "a.safetensors"
    assert main(flags + ["--out", str(first)]) == 0
    second = tmp_path / "b.safetensors"
    checkpoint = tmp_path / "a_checkpoints" / "step_000000256.ckpt"
    assert main(flags + ["--out", str(second), "--resume", str(checkpoint)]) == 0
    assert _same_weights(first, second) == []


# ---------------------------------------------------------------------------- the batched path


def _without(flags: list[str], *names: str) -> list[str]:
    """``flags`` without the options ``names`` and their values."""
    out, skip = [], False
    for flag in flags:
        if skip:
            skip = False
        elif flag in names:
            skip = True
        else:
            out.append(flag)
    return out


# The batched env (train.py's default, so --vec is not given): 8 envs x 32 steps, 3 rollouts.
TINY_BATCHED = _without(TINY, "--vec", "--envs", "--n-steps") + ["--envs", "8", "--n-steps", "32"]


@pytest.fixture(scope="module")
def batched_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("batched") / "a.safetensors"
    assert main(TINY_BATCHED + ["--out", str(out)]) == 0
    return out


def test_the_default_path_is_the_batched_env_and_logs_its_episodes(batched_run):
    folder = batched_run.parent / "a_checkpoints"
    state = read_checkpoint(folder / "step_000000256.ckpt")
    assert state["flags"]["vec"] == "batched" and state["flags"]["envs"] == 8
    env = state["envs"][0]  # the whole batch, mid-episode, by named fields
    assert env["kind"] == "batched" and env["arrays"]["games/layout"].shape[0] == 8
    assert env["rng"]["bit_generator"] == "PCG64"  # its generator's state
    # The self-play pool was pushed into the batch: the snapshot of step 0, then of 256.
    assert [Path(s.split(":")[0]).name for s in env["opponents"][-2:]] == [
        "snapshot_000000000.safetensors",
        "snapshot_000000256.safetensors",
    ]
    rows = list(csv.DictReader((batched_run.parent / "a_log.csv").open()))
    assert int(rows[-1]["timesteps"]) == 768
    assert sum(int(r["episodes"]) for r in rows) > 10  # Monitor-style stats from the batch
    assert 0 <= float(rows[-1]["train_win_rate"]) <= 1
    sidecar = json.loads(batched_run.with_suffix(".json").read_text())
    assert sidecar["timesteps"] == 768 and sidecar["evaluation"]["greedy"]["games"] == 4


@pytest.mark.parametrize("step", [256, 512])
def test_batched_resume_from_step_n_gives_the_uninterrupted_runs_weights_bit_for_bit(
    batched_run, tmp_path, step, capsys
):
    checkpoint = batched_run.parent / "a_checkpoints" / f"step_{step:09d}.ckpt"
    out = tmp_path / "b.safetensors"
    # --vec, --envs and --n-steps not given: the checkpoint's values are taken.
    flags = _without(TINY_BATCHED, "--envs", "--n-steps")
    assert main(flags + ["--out", str(out), "--resume", str(checkpoint)]) == 0
    assert "on 8 batched envs" in capsys.readouterr().out
    assert _same_weights(batched_run, out) == []
    assert (
        _same_weights(
            batched_run.parent / "a_checkpoints" / "step_000000768.safetensors",
            tmp_path / "b_checkpoints" / "step_000000768.safetensors",
        )
        == []
    )


def test_batched_resume_refuses_another_path_or_size(batched_run, tmp_path, capsys):
    checkpoint = batched_run.parent / "a_checkpoints" / "step_000000256.ckpt"
    for extra, message in (
        (["--vec", "dummy"], "--vec 'batched' (given 'dummy')"),
        (["--envs", "4"], "--envs 8 (given 4)"),
    ):
        code = main(
            TINY_BATCHED
            + extra
            + ["--out", str(tmp_path / "b.safetensors"), "--resume", str(checkpoint)]
        )
        assert code == 2
        assert message in capsys.readouterr().err


def _settled(argv: list[str], monkeypatch, tmp_path: Path):
    """The config train() would run (no training)."""
    args = build_parser().parse_args(
        argv + ["--out", str(tmp_path / "m.safetensors"), "--no-progress"]
    )
    return settle(config_of(args))


def test_vec_path_defaults_and_the_fallback_for_agents_the_batch_refuses(
    monkeypatch, tmp_path, capsys
):
    args = _settled([], monkeypatch, tmp_path)
    assert (args.vec, args.envs, args.n_steps) == ("batched", 256, 16)
    assert type(args.envs) is int and type(args.n_steps) is int  # plain ints in checkpoints
    assert args.batch_size == 1024 and type(args.batch_size) is int
    assert (args.imitate, args.shaping, args.opponents) == ("none", 0.0, ("greedy",))
    assert args.features == "fits" and args.timesteps == PER_PLAYERS[2]["timesteps"]
    args = _settled(["--vec", "dummy"], monkeypatch, tmp_path)
    assert (args.vec, args.envs, args.n_steps) == ("dummy", 4, 512)
    # The default minibatch is cut to one rollout when that is smaller.
    assert _settled(["--envs", "8", "--n-steps", "16"], monkeypatch, tmp_path).batch_size == 128
    args = _settled(["--vec", "subproc", "--envs", "2"], monkeypatch, tmp_path)
    assert (args.vec, args.envs, args.n_steps) == ("subproc", 2, 512)
    args = _settled(
        ["--envs", "16", "--n-steps", "8", "--batch-size", "128"], monkeypatch, tmp_path
    )
    assert (args.vec, args.envs, args.n_steps) == ("batched", 16, 8)
    capsys.readouterr()
    args = _settled(["--opponents", "greedy", "search:rollouts=2", "self"], monkeypatch, tmp_path)
    assert (args.vec, args.envs, args.n_steps) == ("dummy", 4, 512)
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [
        "train.py: --vec batched: using dummy instead: it does not play the "
        "opponent 'search:rollouts=2' (it plays random, greedy, counting and model "
        "files)"
    ]
    # The batch is 256 x 16 = 4,096 samples: a larger minibatch is refused before any work.
    with pytest.raises(ValueError, match="--batch-size must be at most --n-steps x --envs = 4096"):
        _settled(["--batch-size", "8192"], monkeypatch, tmp_path)
    assert main(["--batch-size", "8192", "--out", str(tmp_path / "m.safetensors")]) == 2
    assert "--batch-size must be at most --n-steps x --envs = 4096" in capsys.readouterr().err


def test_without_numba_the_default_falls_back_to_dummy_saying_why(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "trash_env.vector", None)  # import fails, as without numba
    args = _settled([], monkeypatch, tmp_path)
    assert (args.vec, args.envs, args.n_steps) == ("dummy", 4, 512)
    assert "using dummy instead: trash_env.vector is unavailable" in capsys.readouterr().out


def test_set_opponents_mid_episode_keeps_the_policies_of_episodes_under_way():
    """Self-play pushes a new pool while games are under way: their seated snapshots keep
    playing (as in TrashSoloEnv) though the new pool's indices point elsewhere."""
    from trash_env.vector import TrashVecEnv

    vec = TrashVecEnv(16, ["random", f"{PRETRAINED}:deterministic=false"], seed=1, episode="round")
    vec.reset()
    seated = vec.core.policy_of.copy()
    assert (seated == 1).any()
    vec.set_opponents(["greedy"])  # pool index 1 no longer exists
    kept = vec.core.policy_of
    assert ((kept >= 0) == (seated >= 0)).all() and (kept[seated >= 0] == 1).all()
    assert vec.core.policies[1] is not None  # the pretrained policy, kept for those games
    rng = np.random.default_rng(0)
    for _ in range(300):
        masks = vec.action_masks()
        vec.step_async((masks * rng.random(masks.shape)).argmax(axis=1))
        vec.step_wait()
    assert (vec.core.policy_of == -1).all()  # every game since is against greedy only
    vec.set_opponents(["greedy"])
    assert vec.core.policies == [None]  # a policy no game holds is let go


def test_evaluations_come_early_in_the_first_interval_then_every_interval():
    points, steps = [], 0
    while steps < 1_000_000:
        steps = next_eval_after(steps, 250_000)
        points.append(steps)
    assert points == [15_625, 31_250, 62_500, 125_000, 250_000, 500_000, 750_000, 1_000_000]
    assert next_eval_after(130_000, 250_000) == 250_000  # resumed mid-interval
    assert next_eval_after(250_000, 250_000) == 500_000
    assert next_eval_after(0, 0) == float("inf")


@pytest.mark.parametrize("players", [2, 3])
def test_the_evaluations_count_the_games_where_the_policy_holds_one_seat(players):
    # With 3 players the evaluation also plays the line-up with two copies of the policy and
    # one opponent; counting those seats would mix in games against itself (par 1/2 there).
    rules = Rules(num_players=players).to_dict()
    figures = evaluate_vs("counting", "random", deals=6, seed=3, rules=rules)
    assert figures["games"] == 6 * players  # one line-up, rotated through every seat
    full = evaluate(["counting", "random"], rules=Rules(num_players=players), deals=6, seed=3)
    if players == 2:
        assert figures["wins"] == full.agents["counting"]["wins"]
    else:
        assert full.agents["counting"]["games"] == 6 * 3 * 3  # 1+2 copies and 2+1
    low, high = figures["ci95"]
    assert low <= figures["win_rate"] <= high and figures["win_rate"] > 1 / players


def test_the_learning_rate_falls_by_lr_decay_over_the_run(tmp_path):
    out = tmp_path / "a.safetensors"
    assert main(TINY + ["--out", str(out), "--lr", "0.001", "--lr-decay", "1"]) == 0
    rates = {}
    for step in (256, 512):
        state = read_checkpoint(tmp_path / "a_checkpoints" / f"step_{step:09d}.ckpt")
        rates[step] = [group["lr"] for group in state["optimizer"]["param_groups"]]
    # The update after step N of 768 runs at 0.001 x (1 - N / 768): 2/3 and 1/3 of it.
    assert rates == {256: [pytest.approx(0.001 * 2 / 3)], 512: [pytest.approx(0.001 / 3)]}
