"""A run's records after a kill or a resume (agents/training/records.py): one log row per
step after SIGKILL + --resume and after resuming a finished run, a model's .json copy that
describes the model, no temp files left; and the train.py edges: --opponents human, the
step-0 log line, the progress bar's end, escape sequences in an opponent's path."""

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

from agents.policies.model_file import load_tensors
from agents.policies.policy import PRETRAINED
from agents.training.cli import main
from agents.training.records import cut_log, remove_temp_files, repair_sidecar_copy

ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "--vec",
    "dummy",
    "--envs",
    "1",
    "--n-steps",
    "64",
    "--batch-size",
    "64",
    "--epochs",
    "1",
    "--episode",
    "round",
    "--eval-every",
    "256",
    "--eval-deals",
    "2",
    "--final-deals",
    "2",
    "--checkpoint-every",
    "64",
    "--workers",
    "1",
    "--opponents",
    "random",
    "--lr-decay",  # a constant rate: the killed run's --timesteps differs from the resumed one's
    "0",
    "--no-progress",
]
EVAL_COLUMNS = ("timesteps", "eval_games", "eval_win_rate", "random_games", "random_win_rate")


pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def _rows(csv_path: Path) -> list[tuple]:
    with csv_path.open(newline="") as handle:
        return [tuple(row[c] for c in EVAL_COLUMNS) for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("whole") / "m.safetensors"
    assert main(FLAGS + ["--timesteps", "768", "--out", str(out)]) == 0
    return out


def test_sigkill_then_resume_leaves_one_row_per_step_and_the_same_weights(whole_run, tmp_path):
    out = tmp_path / "m.safetensors"
    argv = [
        sys.executable,
        str(ROOT / "train.py"),
        *FLAGS,
        "--timesteps",
        "100000",
        "--out",
        str(out),
    ]
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        start_new_session=True,
    )
    folder = tmp_path / "m_checkpoints"
    try:
        deadline = time.time() + 300  # generous: the machine may be loaded
        while time.time() < deadline and not (folder / "step_000000896.ckpt").exists():
            assert process.poll() is None, "train.py ended early"
            time.sleep(0.1)
        assert (folder / "step_000000896.ckpt").exists(), "no checkpoint of 896 in 300 s"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    (folder / ".step_000000960.ckpt.abc123.tmp").write_bytes(b"torn")  # as a kill leaves
    (tmp_path / ".m_log.csv.xyz.tmp").write_bytes(b"torn")
    assert int(_rows(tmp_path / "m_log.csv")[-1][0]) >= 768  # rows past the resumed step
    assert (
        main(
            FLAGS
            + [
                "--timesteps",
                "768",
                "--out",
                str(out),
                "--resume",
                str(folder / "step_000000256.ckpt"),
            ]
        )
        == 0
    )
    assert _rows(tmp_path / "m_log.csv") == _rows(whole_run.parent / "m_log.csv")
    first, _ = load_tensors(whole_run)
    second, _ = load_tensors(out)
    assert all(np.array_equal(first[k], second[k]) for k in first)
    assert not list(tmp_path.rglob("*.tmp"))


def test_resuming_a_finished_run_adds_no_row(whole_run, tmp_path):
    shutil.copytree(whole_run.parent, tmp_path / "run")
    out = tmp_path / "run" / "m.safetensors"
    before = _rows(out.parent / "m_log.csv")
    assert (
        main(
            FLAGS
            + [
                "--timesteps",
                "768",
                "--out",
                str(out),
                "--resume",
                str(out.parent / "m_checkpoints"),
            ]
        )
        == 0
    )
    assert _rows(out.parent / "m_log.csv") == before


def test_a_stale_sidecar_copy_is_rewritten_from_its_model(tmp_path):
    model = tmp_path / "m.safetensors"
    shutil.copy(PRETRAINED, model)
    copy = model.with_suffix(".json")
    copy.write_text(json.dumps({"timesteps": 1}))  # another step's copy, as a kill leaves it
    assert repair_sidecar_copy(model)
    assert json.loads(copy.read_text()) == json.loads(PRETRAINED.with_suffix(".json").read_text())
    assert not repair_sidecar_copy(model)  # now they agree
    copy.unlink()
    assert repair_sidecar_copy(model) and copy.exists()
    model.write_bytes(b"not a model")
    assert not repair_sidecar_copy(model)  # left to its readers, which refuse it


def test_temp_files_of_this_run_only_are_removed(tmp_path):
    (tmp_path / "m_pool").mkdir()
    mine = [
        tmp_path / ".m.safetensors.a1.tmp",
        tmp_path / ".m.json.b2.tmp",
        tmp_path / "m_pool" / ".snapshot_000000000.safetensors.c3.tmp",
    ]
    other = [tmp_path / ".other.safetensors.d4.tmp", tmp_path / "m.tmp"]
    for path in mine + other:
        path.write_bytes(b"")
    assert remove_temp_files(tmp_path, "m") == len(mine)
    assert not any(p.exists() for p in mine) and all(p.exists() for p in other)


def test_cut_log_keeps_the_rows_up_to_the_step(tmp_path):
    log = tmp_path / "log.csv"
    log.write_bytes(b"timesteps,x\r\n0,a\r\n64,b\r\n128,c\r\nbad,d\r\n192,e\r\n")
    assert cut_log(log, 128) == 128
    assert log.read_bytes() == b"timesteps,x\r\n0,a\r\n64,b\r\n128,c\r\n"
    assert cut_log(tmp_path / "none.csv", 5) is None


# ---------------------------------------------------------------------------- train.py edges


def test_a_human_opponent_or_teacher_is_refused_in_one_sentence(tmp_path, capsys):
    for flags, name in (
        (["--opponents", "greedy", "human"], "--opponents"),
        (["--imitate", "human"], "--imitate"),
    ):
        assert main(flags + ["--out", str(tmp_path / "m.safetensors")]) == 2
        err = capsys.readouterr().err
        assert f"train.py: error: {name}: 'human' plays at a terminal" in err
        assert "EOFError" not in err and "Traceback" not in err


def test_no_raw_escape_sequence_from_an_opponent_path_reaches_the_terminal(tmp_path, capsys):
    evil = tmp_path / "evil\x1b[2J\x1b]0;title\x07.safetensors"
    shutil.copy(PRETRAINED, evil)
    shutil.copy(PRETRAINED.with_suffix(".json"), evil.with_suffix(".json"))
    argv = [
        *FLAGS,
        "--timesteps",
        "64",
        "--eval-every",
        "0",
        "--checkpoint-every",
        "1000",
        "--opponents",
        str(evil),
        "--out",
        str(tmp_path / "m.safetensors"),
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "\\x1b[2J" in captured.out  # named, escaped
    assert "\x1b" not in captured.out + captured.err and "\x07" not in captured.out
    missing = tmp_path / "gone\x1b[31m.safetensors"
    assert (
        main([*argv[:-4], "--opponents", str(missing), "--out", str(tmp_path / "m.safetensors")])
        == 2
    )
    assert "\x1b" not in capsys.readouterr().err


def test_the_step_0_line_ends_with_words_not_blanks(tmp_path, capsys):
    argv = [
        *FLAGS,
        "--timesteps",
        "64",
        "--checkpoint-every",
        "1000",
        "--out",
        str(tmp_path / "m.safetensors"),
    ]
    assert main(argv) == 0
    first = next(
        line for line in capsys.readouterr().out.splitlines() if line.startswith("[0 steps")
    )
    assert first.endswith("no training episode finished since the last row"), first


def test_the_progress_bar_stops_at_the_total():
    from types import SimpleNamespace

    from agents.training.callbacks import ProgressBar

    bar = ProgressBar(0, 4_000_000)
    bar.model = SimpleNamespace(num_timesteps=3_999_000)
    bar._on_step()
    bar.model.num_timesteps = 4_001_792  # the last rollout runs past the total
    bar._on_step()
    bar.close()
    assert bar.bar.n == 4_000_000
    resumed = ProgressBar(4_001_792, 4_000_000)  # a finished run resumed
    resumed.close()
    assert resumed.bar.n == 4_000_000
