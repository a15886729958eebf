"""The checkpoint file (agents/training/checkpoint.py): named tensors and a JSON document
checked against its schema, with no module path or private attribute name in it; it runs no
code when read and refuses, in one sentence, anything it did not write (a pickle payload, a
truncated file, an extra or missing key, a value of the wrong type, an episode that does not
replay, a tampered batch: issue 28.3). A file written by an older layout of the code
(tests/data/checkpoint_v3) still resumes, bit for bit. Exact resume itself is tested in
tests/test_train.py."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load, save

from agents.policies.model_file import load_tensors
from agents.training.checkpoint import METADATA_KEY, OLD_MAGIC, read_checkpoint
from agents.training.cli import main

ROOT = Path(__file__).resolve().parents[1]
OLD = Path(__file__).parent / "data" / "checkpoint_v3"
COMMON = [
    "--batch-size",
    "64",
    "--epochs",
    "1",
    "--episode",
    "round",
    "--eval-every",
    "0",
    "--final-deals",
    "2",
    "--no-progress",
    "--workers",
    "1",
]
TINY = COMMON + [
    "--vec",
    "dummy",
    "--envs",
    "2",
    "--n-steps",
    "64",
    "--checkpoint-every",
    "128",
    "--opponents",
    "random",
    "--timesteps",
    "256",
]
# The flags of the older layout's fixture run (tests/data/checkpoint_v3/README.md), batched.
BATCHED = COMMON + [
    "--envs",
    "4",
    "--n-steps",
    "16",
    "--net",
    "8",
    "--checkpoint-every",
    "64",
    "--timesteps",
    "128",
    "--opponents",
    "random",
    "greedy",
]


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


class Evil:
    """Unpickling this writes the marker file: the payload a crafted pickle carries."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ckpt") / "a.safetensors"
    assert main(TINY + ["--out", str(out)]) == 0
    return out.parent / "a_checkpoints"


@pytest.fixture(scope="module")
def batched(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("batched") / "a.safetensors"
    assert main(BATCHED + ["--out", str(out)]) == 0
    return out.parent / "a_checkpoints" / "step_000000064.ckpt"


def _parts(path: Path) -> tuple[dict, dict]:
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    return json.loads(json.loads(data[8 : 8 + size])["__metadata__"][METADATA_KEY]), load(data)


def _rewrite(path: Path, change) -> None:
    """Rewrite the checkpoint through ``change(document, tensors)``."""
    document, tensors = _parts(path)
    change(document, tensors)
    path.write_bytes(save(tensors, metadata={METADATA_KEY: json.dumps(document)}))


def _resume(folder: Path, tmp_path: Path, capsys, name: str = "step_000000128.ckpt", flags=TINY):
    code = main(flags + ["--out", str(tmp_path / "b.safetensors"), "--resume", str(folder / name)])
    return code, capsys.readouterr()


def _one_sentence_refusal(code: int, captured, message: str) -> None:
    assert code == 2, captured
    assert message in captured.err, captured.err
    assert "Traceback" not in captured.err
    errors = [
        line for line in captured.err.splitlines() if line.startswith("python train.py: error")
    ]
    assert len(errors) == 1


def _copy(run: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "a_checkpoints"
    shutil.copytree(run, folder)
    (folder / "step_000000256.ckpt").unlink()  # only the one of step 128 to fall back on
    return folder


def _keys_and_strings(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _keys_and_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys_and_strings(item)
    elif isinstance(value, str):
        yield value


@pytest.mark.parametrize("kind", ["solo", "batched"])
def test_a_checkpoint_is_named_fields_without_code_paths_and_resumes(
    kind, run, batched, tmp_path, capsys
):
    path = run / "step_000000128.ckpt" if kind == "solo" else batched
    document, tensors = _parts(path)
    assert document["format"] == "trash-env-checkpoint" and document["version"] == 3
    assert document["env"]["kind"] == kind
    words = list(_keys_and_strings(document))
    assert not [w for w in words if re.fullmatch(r"[\w.]+:[A-Za-z_][\w.]*", w)]  # module:qualname
    assert not [w for w in words if w.startswith("_")]  # no private attribute names
    names = {re.sub(r"/.*", "/", name) for name in tensors}
    assert names <= {"policy/", "optimizer/", "rng/", "last_obs", "last_episode_starts", "env/"}
    state = read_checkpoint(path)
    assert state["timesteps"] == int(path.stem[5:])
    if kind == "solo":
        assert len(state["envs"]) == 2 and state["envs"][0]["episode"]["actions"]
        code, _ = _resume(run, tmp_path, capsys)
    else:
        assert state["envs"][0]["arrays"]["games/layout"].shape == (4, 6, 10)
        code, _ = _resume(path.parent, tmp_path, capsys, path.name, BATCHED)
    assert code == 0


def test_an_old_pickle_checkpoint_is_refused_and_its_payload_not_run(tmp_path, capsys):
    marker = tmp_path / "PWNED"
    payload = pickle.dumps(Evil(marker))
    path = tmp_path / "step_000000128.ckpt"
    path.write_bytes(OLD_MAGIC + hashlib.sha256(payload).digest() + payload)
    code, captured = _resume(tmp_path, tmp_path, capsys)
    assert code == 2 and not marker.exists()
    assert "old pickle format" in captured.err and "format changed" in captured.err
    assert "Traceback" not in captured.err
    path.write_bytes(payload)  # a bare pickle under the checkpoint's name
    code, captured = _resume(tmp_path, tmp_path, capsys)
    assert code == 2 and not marker.exists() and "Traceback" not in captured.err


def test_a_crafted_step_999999999_in_the_folder_is_skipped_for_the_real_one(run, tmp_path, capsys):
    folder = _copy(run, tmp_path)
    marker = tmp_path / "PWNED"
    payload = pickle.dumps(Evil(marker))
    (folder / "step_999999999.ckpt").write_bytes(
        OLD_MAGIC + hashlib.sha256(payload).digest() + payload
    )
    code = main(TINY + ["--out", str(tmp_path / "b.safetensors"), "--resume", str(folder)])
    captured = capsys.readouterr()
    assert code == 0 and not marker.exists()
    assert "skipping checkpoint" in captured.err and "step_999999999.ckpt" in captured.err
    assert "resuming from" in captured.out and "step_000000128.ckpt" in captured.out


def _episode(d: dict) -> dict:
    return d["env"]["envs"][0]["episode"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d, t: d.__setitem__("evil", 1), "('evil' was unexpected)"),
        (lambda d, t: d.pop("timesteps"), "'timesteps' is a required property"),
        (lambda d, t: d.__setitem__("timesteps", "many"), "at timesteps: 'many' is not of type"),
        (lambda d, t: d.__setitem__("version", 1), "at version: 3 was expected"),
        (
            lambda d, t: d["sb3"].__setitem__("progress_remaining", np.nan),
            "NaN is not a JSON number",
        ),
        (lambda d, t: d["flags"].__setitem__("vec", None), "--vec None (given 'dummy')"),
        (lambda d, t: _episode(d)["actions"].append(99), "99 is greater than the maximum of 12"),
        (lambda d, t: _episode(d).__setitem__("actions", [12] * 5), "does not replay"),
        (
            lambda d, t: _episode(d).__setitem__("opponents", ["os"]),
            "outside the run's pool ('os')",
        ),
        (lambda d, t: d["env"]["envs"].pop(), "the checkpoint holds 1 envs, --envs is 2"),
        (lambda d, t: t.__setitem__("evil", np.zeros(1)), "unexpected or missing tensors (evil)"),
        (lambda d, t: t.pop("rng/torch"), "the tensor rng/torch is missing"),
        (
            lambda d, t: t.__setitem__("rng/numpy", np.zeros(3, np.uint32)),
            "the tensor rng/numpy is missing or not uint32 of shape (624,)",
        ),
    ],
)
def test_a_tampered_checkpoint_gets_one_sentence_and_exit_2(run, tmp_path, capsys, change, message):
    folder = tmp_path / "only"
    folder.mkdir()
    shutil.copy(run / "step_000000128.ckpt", folder)
    _rewrite(folder / "step_000000128.ckpt", change)
    _one_sentence_refusal(*_resume(folder, tmp_path, capsys), message)


def test_a_truncated_checkpoint_is_refused(run, tmp_path, capsys):
    folder = tmp_path / "only"
    folder.mkdir()
    data = (run / "step_000000128.ckpt").read_bytes()
    for cut in (4, 100, len(data) // 2, len(data) - 1):
        (folder / "step_000000128.ckpt").write_bytes(data[:cut])
        code, captured = _resume(folder, tmp_path, capsys)
        assert code == 2 and "truncated" in captured.err, (cut, captured.err)
        assert "Traceback" not in captured.err


# ---------------------------------------------------------------------------- the old layout


def test_a_checkpoint_of_an_older_layout_resumes_as_written(tmp_path, capsys):
    """Written by the code of commit 912cceb (tests/data/checkpoint_v3/README.md), whose batch
    kept its shaping figures in private fields that have since moved: it names none of them."""
    shutil.copy(OLD / "step_000000064.ckpt", tmp_path)
    code, captured = _resume(tmp_path, tmp_path, capsys, "step_000000064.ckpt", BATCHED)
    assert code == 0, captured.err
    first, _ = load_tensors(OLD / "uninterrupted_step_000000128.safetensors")
    second, _ = load_tensors(tmp_path / "b_checkpoints" / "step_000000128.safetensors")
    assert first.keys() == second.keys()
    # The stored policy was computed on another machine: torch's float32 kernels round
    # differently per instruction set (AVX2 or AVX-512), by a few units in the last place. A
    # resume that lost any state (a random stream, an optimizer moment, the batch's games)
    # would take other actions and move the weights by far more than this bound.
    for k in first:
        np.testing.assert_allclose(second[k], first[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_a_version_2_checkpoint_is_refused_in_one_sentence(tmp_path, capsys):
    """Version 2 (objects stored under their module:qualname) was written only by development
    versions after release 0.1.0; it is refused, never walked."""
    document = {"format": "trash-env-checkpoint", "version": 2, "main": {}, "envs": []}
    data = save({"main.0": np.zeros(1)}, metadata={METADATA_KEY: json.dumps(document)})
    (tmp_path / "step_000000064.ckpt").write_bytes(data)
    code, captured = _resume(tmp_path, tmp_path, capsys, "step_000000064.ckpt", BATCHED)
    _one_sentence_refusal(code, captured, "a version 2 checkpoint, a format of development")


# ---------------------------------------------------------------------------- issue 28.3


def _games(t: dict, field: str) -> np.ndarray:
    return t[f"env/games/{field}"]


def _all_games_0xff(d: dict, t: dict) -> None:
    for name in [n for n in t if n.startswith("env/games/")]:
        t[name] = np.frombuffer(b"\xff" * t[name].nbytes, t[name].dtype).reshape(t[name].shape)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_all_games_0xff, "flag that is not 0 or 1"),
        (lambda d, t: _games(t, "stock").view(np.uint8).__setitem__((0, 0), 200), "stock card"),
        (lambda d, t: _games(t, "layout").view(np.uint8).__setitem__((1, 0, 0), 200), "layout"),
        (lambda d, t: _games(t, "sizes").__setitem__((2, 1), 11), "sizes outside 0..10"),
        (lambda d, t: _games(t, "current").__setitem__(3, 5), "current outside 0..1"),
        (lambda d, t: _games(t, "nstock").__setitem__(0, 30000), "nstock outside"),
        (lambda d, t: _games(t, "rng").__setitem__((0, 3), 2), "not a PCG64 state"),
        (lambda d, t: _games(t, "hidden").__setitem__((0, 1), 9), "more hidden cards"),
        (lambda d, t: _games(t, "turns").__setitem__(0, 10**6), "turns outside"),
        (lambda d, t: t["env/seats"].__setitem__(0, 7), "learner seat outside 0..1"),
        (lambda d, t: t["env/opponent_kinds"].__setitem__((0, 5), 3), "a bad opponent seat"),
        (lambda d, t: t["env/opponent_policy"].__setitem__(slice(None), 9), "bad opponent seat"),
        (lambda d, t: t.pop("env/games/held"), "games' fields differ from this version's (held)"),
        (lambda d, t: d["env"]["policies"].append("search"), "outside the run's pool ('search')"),
        (lambda d, t: d["env"]["rules"].__setitem__("num_players", 3), "plays other rules"),
    ],
)
def test_a_tampered_batch_is_refused_before_the_kernels_see_it(
    batched, tmp_path, capsys, change, message
):
    shutil.copy(batched, tmp_path)
    _rewrite(tmp_path / batched.name, change)
    code, captured = _resume(tmp_path, tmp_path, capsys, batched.name, BATCHED)
    _one_sentence_refusal(code, captured, message)


BOUNDSCHECK = """
import sys
import numpy as np
from numba import config
from pathlib import Path
from agents.training.checkpoint import read_checkpoint
from agents.training.env_state import restore_batched_env
from trash_env.vector import _kernels as K, make_vec_env

assert config.BOUNDSCHECK
saved = read_checkpoint(Path(sys.argv[1]))["envs"]
env = saved[0]
config_ = type("Config", (), {"envs": 4})
fresh = make_vec_env(4, env["opponents"], env["rules"], seed=0, shaping=env["shaping"])
venv = restore_batched_env(saved, config_, fresh)
rng = np.random.default_rng(0)
for _ in range(400):
    masks = venv.action_masks()
    venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
venv.core.batch.check_invariants()
games = venv.core.batch.games.copy()
games["current"][0], games["decision"][0] = 99, K.WILD  # a player index past the table
arrays = venv.core.batch.arrays
try:
    K.batch_violations(games, np.zeros(4, np.int64), arrays.cfg, arrays.wild, arrays.totals)
except IndexError:
    print("bounds checked")
"""


def test_a_resumed_batch_runs_the_kernels_within_bounds_with_numba_boundscheck(batched, tmp_path):
    """The kernels compiled afresh with bounds checking play 400 steps of a resumed batch
    without an out-of-bounds access; the same run shows that the checking is on (an index
    past the table, which only the range checks keep from the kernels, raises)."""
    env = {
        **os.environ,
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        [sys.executable, "-c", BOUNDSCHECK, str(batched)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "bounds checked"
