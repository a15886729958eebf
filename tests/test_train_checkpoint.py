"""The checkpoint file (agents/training/checkpoint.py) runs no code when read and refuses,
in one sentence, anything it did not write: a pickle payload (the old format, or dropped
into a checkpoints folder as ``step_999999999.ckpt``), a truncated file, an extra or a
missing key, a value of the wrong type, a class it does not allow, a batch of another size.
Exact resume itself is tested in tests/test_train.py."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load, save

from agents.training.checkpoint import METADATA_KEY, OLD_MAGIC, read_checkpoint
from agents.training.cli import main
from agents.training.plain import decode, encode

TINY = [
    "--vec",
    "dummy",
    "--envs",
    "2",
    "--n-steps",
    "64",
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
    "--checkpoint-every",
    "128",
    "--no-progress",
    "--workers",
    "1",
    "--opponents",
    "random",
    "--timesteps",
    "256",
]


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


def _rewrite(path: Path, change) -> None:
    """Rewrite the checkpoint's JSON document through ``change(document)``."""
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    document = json.loads(json.loads(data[8 : 8 + size])["__metadata__"][METADATA_KEY])
    change(document)
    path.write_bytes(save(load(data), metadata={METADATA_KEY: json.dumps(document)}))


def _main_items(document: dict) -> list:
    return document["main"]["dict"]


def _resume(folder: Path, tmp_path: Path, capsys, name: str = "step_000000128.ckpt"):
    code = main(TINY + ["--out", str(tmp_path / "b.safetensors"), "--resume", str(folder / name)])
    return code, capsys.readouterr()


def _copy(run: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "a_checkpoints"
    shutil.copytree(run, folder)
    (folder / "step_000000256.ckpt").unlink()  # only the one of step 128 to fall back on
    return folder


def test_a_checkpoint_is_tensors_and_json_and_resumes(run, tmp_path, capsys):
    data = (run / "step_000000128.ckpt").read_bytes()
    assert not data.startswith(OLD_MAGIC) and b"\x80\x04" not in data[:16]
    state = read_checkpoint(run / "step_000000128.ckpt")
    assert state["timesteps"] == 128 and len(state["envs"]) == 2
    code, _ = _resume(run, tmp_path, capsys)
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


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: _main_items(d).append(["evil", 1]), "unexpected evil"),
        (
            lambda d: _main_items(d).__setitem__(
                slice(None), [p for p in _main_items(d) if p[0] != "timesteps"]
            ),
            "missing timesteps",
        ),
        (
            lambda d: [p.__setitem__(1, "many") for p in _main_items(d) if p[0] == "timesteps"],
            "timesteps must be an integer",
        ),
        (lambda d: d.__setitem__("version", 1), "not a version 2"),
        (lambda d: d.__setitem__("extra", 1), "unexpected extra"),
        (
            lambda d: d["envs"][0]["tree"].__setitem__("object", "os:system"),
            "a class that is not allowed ('os:system')",
        ),
        (
            lambda d: d["envs"][0]["tree"].__setitem__("object", "builtins:eval"),
            "a class that is not allowed",
        ),
        (lambda d: d["envs"].pop(), "unexpected tensors envs.1.0"),
        (lambda d: d["envs"][0]["tree"]["state"].pop(), "lacks attributes"),
    ],
)
def test_a_tampered_checkpoint_gets_one_sentence_and_exit_2(run, tmp_path, capsys, change, message):
    folder = tmp_path / "only"
    folder.mkdir()
    shutil.copy(run / "step_000000128.ckpt", folder)
    _rewrite(folder / "step_000000128.ckpt", change)
    code, captured = _resume(folder, tmp_path, capsys)
    assert code == 2, captured
    assert message in captured.err, captured.err
    assert "Traceback" not in captured.err
    lines = captured.err.splitlines()
    errors = [line for line in lines if line.startswith("python train.py: error")]
    assert len(errors) == 1


def test_a_truncated_checkpoint_is_refused(run, tmp_path, capsys):
    folder = tmp_path / "only"
    folder.mkdir()
    data = (run / "step_000000128.ckpt").read_bytes()
    for cut in (4, 100, len(data) // 2, len(data) - 1):
        (folder / "step_000000128.ckpt").write_bytes(data[:cut])
        code, captured = _resume(folder, tmp_path, capsys)
        assert code == 2 and "truncated" in captured.err, (cut, captured.err)
        assert "Traceback" not in captured.err


def test_the_plain_codec_keeps_shared_objects_and_refuses_other_classes():
    shared = [1, 2]
    tree, arrays = encode(
        {
            "a": shared,
            "b": shared,
            "c": (np.arange(3), np.float32(2.5)),
            "g": np.random.default_rng(4),
        },
        {},
    )
    back = decode(json.loads(json.dumps(tree)), arrays, {}, "test")
    assert back["a"] is back["b"] and back["a"] == [1, 2]
    assert np.array_equal(back["c"][0], np.arange(3)) and back["c"][1] == np.float32(2.5)
    assert back["g"].integers(10**9) == np.random.default_rng(4).integers(10**9)
    with pytest.raises(ValueError, match="cannot store a .*Evil"):
        encode(Evil(Path("x")), {})
    with pytest.raises(ValueError, match="arrays of Python objects"):
        decode(
            {"id": 0, "array": 0, "dtype": "|O", "shape": [1]}, [np.zeros(8, np.uint8)], {}, "test"
        )
