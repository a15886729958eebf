"""Hostile inputs to train.py's resume, grouped by surface (issue 41, items 5, 6 and 10).

Where a resume writes: into the checkpoint's own run unless ``--out`` names a new one, never
into a folder holding another run, every output path checked before any work. What a
checkpoint's tensors must be: each one is checked before training resumes (finite, the shapes
the network and its optimizer expect, counters in range, random states valid), and a bad one
is refused in one sentence naming it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load, save

from agents.training.checkpoint import METADATA_KEY
from agents.training.cli import main
from agents.training.run import Run

TINY = [
    "--batch-size", "64", "--epochs", "1", "--episode", "round", "--eval-every", "0",
    "--final-deals", "2", "--no-progress", "--workers", "1", "--vec", "dummy", "--envs", "2",
    "--n-steps", "64", "--checkpoint-every", "128", "--opponents", "random",
    "--timesteps", "256", "--net", "8",
]  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (links as their text) with its bytes' hash."""
    found = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = "link:" + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            found[key] = "dir"
    return found


def _other_run(folder: Path) -> None:
    """The files a finished run at ``folder/model.safetensors`` leaves, one of each kind."""
    for sub in ("model_pool", "model_checkpoints"):
        (folder / sub).mkdir(parents=True)
    files = {
        "model.safetensors": b"a finished run's model",
        "model.json": b"{}",
        "model_log.csv": b"timesteps,seconds\r\n0,1\r\n128,2\r\n1003520,3\r\n",
        "model_curve.png": b"png",
        ".model_log.csv.abc123.tmp": b"a temp file a resume here would sweep",
        "model_pool/snapshot_000000000.safetensors": b"snapshot",
        "model_checkpoints/step_000000128.ckpt": b"its checkpoint",
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)


def _one_sentence(code: int, err: str, message: str) -> None:
    assert code == 2, err
    assert message in " ".join(err.split()), err
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1, err


# ---------------------------------------------------------------------------- where it writes


def test_a_run_resumed_as_its_interrupt_line_says_leaves_every_other_run_byte_for_byte(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / "runs"
    _other_run(runs / "default")  # where a resume without --out used to write
    _other_run(runs / "other")
    before = {name: _tree(runs / name) for name in ("default", "other")}

    real = Run.checkpoint

    def interrupted(self):  # Ctrl-C right after the first checkpoint is written
        real(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(Run, "checkpoint", interrupted)
    assert main(TINY + ["--out", "runs/mine/m.safetensors"]) == 130
    err = capsys.readouterr().err
    said = re.search(r"continue with --resume (\S+)\)", err)
    assert said, err
    assert said.group(1) == str(Path("runs/mine/m_checkpoints"))
    monkeypatch.setattr(Run, "checkpoint", real)

    assert main(TINY + ["--resume", said.group(1)]) == 0  # as the line says: no --out
    captured = capsys.readouterr()
    assert "resuming from runs/mine/m_checkpoints/step_000000128.ckpt" in captured.out
    assert {name: _tree(runs / name) for name in ("default", "other")} == before
    mine = runs / "mine"
    assert json.loads((mine / "m.json").read_text())["timesteps"] == 256
    assert (mine / "m_checkpoints" / "step_000000256.ckpt").is_file()
    rows = (mine / "m_log.csv").read_text().splitlines()
    assert rows[0].startswith("timesteps,") and rows[-1].startswith("256,")


def test_a_resume_into_another_runs_out_is_refused_in_one_sentence(tmp_path, capsys):
    out = tmp_path / "a" / "m.safetensors"
    assert main(TINY + ["--timesteps", "128", "--out", str(out)]) == 0
    _other_run(tmp_path / "b")
    before = _tree(tmp_path / "b")
    capsys.readouterr()
    code = main(
        TINY
        + ["--out", str(tmp_path / "b" / "model.safetensors")]
        + ["--resume", str(tmp_path / "a" / "m_checkpoints")]
    )
    _one_sentence(code, capsys.readouterr().err, "holds another run (model.safetensors")
    assert _tree(tmp_path / "b") == before
    # its own run given as --out, or a new one, is fine (checked, not run here: --timesteps)
    for given in (out, tmp_path / "c" / "new.safetensors"):
        code = main(
            TINY
            + ["--timesteps", "64", "--out", str(given)]
            + ["--resume", str(tmp_path / "a" / "m_checkpoints")]
        )
        assert "--timesteps 64 is below the checkpoint's step 128" in capsys.readouterr().err


def test_a_resume_from_a_folder_of_no_run_needs_out(tmp_path, capsys):
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "step_000000128.ckpt").write_bytes(b"whatever")
    code = main(TINY + ["--resume", str(folder)])
    _one_sentence(code, capsys.readouterr().err, "is not a run's NAME_checkpoints folder")


def test_the_sidecar_copys_path_is_checked_before_any_work(tmp_path, capsys, monkeypatch):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    (tmp_path / "m.json").symlink_to("/dev/full")

    def no_training(*args, **kwargs):
        raise AssertionError("training started before the output paths were checked")

    monkeypatch.setattr("agents.training.cli.train", no_training)
    code = main(TINY + ["--out", str(tmp_path / "m.safetensors")])
    _one_sentence(code, capsys.readouterr().err, "--out (its sidecar copy)")


# ---------------------------------------------------------------------------- what it holds


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "a.safetensors"
    assert main(TINY + ["--timesteps", "128", "--out", str(out)]) == 0
    return out.parent / "a_checkpoints" / "step_000000128.ckpt"


def _parts(path: Path) -> tuple[dict, dict]:
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    return json.loads(json.loads(data[8 : 8 + size])["__metadata__"][METADATA_KEY]), load(data)


def _first(tensors: dict, pattern: str) -> str:
    return sorted(n for n in tensors if re.fullmatch(pattern, n))[0]


def _nan_weight(d, t):
    name = _first(t, r"policy/.*weight")
    t[name] = t[name].copy()
    t[name].flat[0] = np.nan


def _wrong_moments(d, t):  # both moments of parameter 0 of another shape, which they agree on
    for moment in ("exp_avg", "exp_avg_sq"):
        t[f"optimizer/0/{moment}"] = np.zeros(3, np.float32)


def _wrong_policy_shape(d, t):
    name = _first(t, r"policy/.*bias")
    t[name] = np.zeros(t[name].size + 1, np.float32)


def _set(name: str, value) -> object:
    def change(d, t):
        t[name] = np.asarray(value, t[name].dtype)

    return change


def _even_inc(d, t):
    episode = next(e["episode"] for e in d["env"]["envs"] if e["episode"] is not None)
    episode["rng"]["state"]["inc"] -= 1


def _python_position(d, t):
    t["rng/python"] = t["rng/python"].copy()
    t["rng/python"][624] = 700


def _betas(d, t):
    d["optimizer"]["param_groups"][0]["betas"] = [1.0, 0.999]


HOSTILE = [
    (_nan_weight, r"its tensor policy/\S+weight holds a value that is not finite"),
    (
        _set("optimizer/0/step", -5.0),
        re.escape("its tensor optimizer/0/step must be one whole count"),
    ),
    (
        _set("optimizer/0/step", 2.5),
        re.escape("its tensor optimizer/0/step must be one whole count"),
    ),
    (
        _set("optimizer/0/step", 1e9),
        re.escape("its tensor optimizer/0/step must be one whole count"),
    ),
    (_wrong_moments, r"its tensor optimizer/0/exp_avg has shape \(3,\), its parameter's is"),
    (
        lambda d, t: t.__setitem__("optimizer/0/exp_avg", np.zeros(3, np.float32)),
        re.escape("its tensor optimizer/0/exp_avg_sq has another shape than optimizer/0/exp_avg"),
    ),
    (
        lambda d, t: t.__setitem__("optimizer/0/exp_avg_sq", -t["optimizer/0/exp_avg_sq"] - 1),
        re.escape("its tensor optimizer/0/exp_avg_sq holds a negative second moment"),
    ),
    (lambda d, t: t.pop("optimizer/0/exp_avg_sq"), re.escape("its tensor optimizer/0/* holds")),
    (_wrong_policy_shape, r"its tensor policy/\S+bias has shape"),
    (
        lambda d, t: t.__setitem__("last_obs", np.full_like(t["last_obs"], np.inf)),
        re.escape("its tensor last_obs holds a value that is not finite"),
    ),
    (
        lambda d, t: t.__setitem__("last_obs", t["last_obs"][:, :-1].copy()),
        re.escape("its tensor last_obs has shape"),
    ),
    (
        lambda d, t: t.__setitem__("rng/torch", t["rng/torch"][:-8].copy()),
        re.escape("its tensor rng/torch is not torch's random state"),
    ),
    (_set("rng/numpy", np.zeros(624)), re.escape("its tensor rng/numpy is all zero")),
    (_python_position, re.escape("its tensor rng/python is not an MT19937 state")),
    (_even_inc, re.escape("its env 0 episode rng is not a PCG64 state (its increment inc is even")),
    (_betas, re.escape("its optimizer param_groups/0 has settings Adam refuses")),
]


@pytest.mark.parametrize(("change", "message"), HOSTILE)
def test_a_bad_tensor_is_refused_before_training_naming_it(
    checkpoint, tmp_path, capsys, change, message
):
    run = tmp_path / "a"
    shutil.copytree(checkpoint.parents[1], run)
    path = run / "a_checkpoints" / checkpoint.name
    document, tensors = _parts(path)
    change(document, tensors)
    path.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(document)}))
    log = (run / "a_log.csv").read_bytes()
    code = main(TINY + ["--resume", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert re.search(message, " ".join(err.split())), err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1, err
    assert (run / "a_log.csv").read_bytes() == log  # refused before the log was touched


def test_the_untouched_checkpoint_resumes(checkpoint, tmp_path):
    run = tmp_path / "a"
    shutil.copytree(checkpoint.parents[1], run)
    assert main(TINY + ["--resume", str(run / "a_checkpoints")]) == 0
    assert json.loads((run / "a.json").read_text())["timesteps"] == 256


# ---------------------------------------------------------------------------- the envs' state


def test_the_checkpoint_code_names_no_private_attribute_of_the_envs():
    """agents/training/env_state.py reads and restores the envs through their public
    ``state_dict()``/``load_state_dict()`` and attributes only (issue 40, item 5)."""
    import ast

    from agents.training import env_state

    tree = ast.parse(Path(env_state.__file__).read_text())
    private = [
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
    ]
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name.startswith("_")
    ]
    paths = [
        p for p in env_state.BATCH_ARRAYS.values() if any(s.startswith("_") for s in p.split("."))
    ]
    assert private == [] and imported == [] and paths == []


def test_a_solo_env_and_its_shaping_continue_from_their_state_dicts():
    from agents.training.shaping import ProgressShaping
    from trash_env.solo import TrashSoloEnv

    def fresh() -> ProgressShaping:
        return ProgressShaping(TrashSoloEnv(opponents=["random"]), 0.5)

    first = fresh()
    first.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        first.step(int(rng.choice(np.flatnonzero(first.action_masks()))))
    second = fresh()
    second.unwrapped.load_state_dict(first.unwrapped.state_dict())
    second.load_state_dict(first.state_dict())
    assert second.state_dict() == first.state_dict()
    assert json.loads(json.dumps(first.state_dict())) == first.state_dict()  # JSON values
    assert first.unwrapped.state_dict() == second.unwrapped.state_dict()
    first.reset()
    second.reset()
    assert first.unwrapped.deal_seed == second.unwrapped.deal_seed
    with pytest.raises(ValueError):
        second.load_state_dict({**first.state_dict(), "coef": -1.0})


def test_a_batch_continues_from_its_state_dict():
    pytest.importorskip("numba", reason="the batched engine needs numba")
    from trash_env.vector import VectorGame

    first = VectorGame(batch_size=4, seed=1)

    def play(batch, steps: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            masks = batch.action_masks()
            batch.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]), autoreset=True)

    play(first, 300, 0)
    second = VectorGame(batch_size=4, seed=99)
    second.load_state_dict(first.state_dict())
    play(first, 300, 1)
    play(second, 300, 1)
    assert first.games.tobytes() == second.games.tobytes()
    assert np.array_equal(first.seeds, second.seeds)
