"""benchmarks/train_speed.py's --judge: the model of a step, kept by train.py's checkpoint and
judged on duplicate deals, with the wall time of its evaluation row. Nothing here times anything
against a target."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import train_speed  # noqa: E402  (benchmarks/train_speed.py)

pytestmark = pytest.mark.slow  # the second tier: `pytest -m slow`


def test_the_model_path_is_the_last_out_flag_or_the_temporary_one(tmp_path):
    assert train_speed.out_path(["--seed", "1"], tmp_path) == tmp_path / "model.safetensors"
    flags = ["--out", "a/m.safetensors", "--envs", "8", "--out", "b/n.safetensors"]
    assert train_speed.out_path(flags, tmp_path) == Path("b/n.safetensors")


def test_a_checkpoint_counts_once_its_sidecar_is_written(tmp_path):
    out = tmp_path / "m.safetensors"
    folder = tmp_path / "m_checkpoints"
    folder.mkdir()
    for step in (2048, 4096, 8192):
        (folder / f"step_{step:09d}.safetensors").write_bytes(b"")
    (folder / f"step_{8192:09d}.json").write_text("{}")
    assert train_speed.checkpoint_model(out, 4096) == folder / f"step_{8192:09d}.safetensors"
    (folder / f"step_{4096:09d}.json").write_text("{}")
    assert train_speed.checkpoint_model(out, 4096) == folder / f"step_{4096:09d}.safetensors"
    assert train_speed.checkpoint_model(out, 9000) is None


def test_judge_keeps_the_model_of_the_step_and_judges_it(tmp_path, capsys):
    out = tmp_path / "speed.json"
    code = train_speed.main(
        ["--timesteps", "8192", "--eval-every", "4096", "--judge", "4096"]
        + ["--judge-deals", "2", "--judge-seed", "7", "--json", str(out)]
        + ["--", "--envs", "16", "--n-steps", "64", "--final-deals", "1"]
    )
    assert code == 0
    data = json.loads(out.read_text())
    judged = data["judged"]
    assert (judged["steps"], judged["deals"], judged["eval_seed"]) == (4096, 2, 7)
    row = next(r for r in data["rows"] if r["steps"] == 4096)  # the row of the judged model
    assert judged["seconds"] == row["seconds"] and data["meta"]["stopped_at_level"]
    assert 0.0 <= judged["vs_greedy"] <= 1.0 and len(judged["vs_greedy_ci95"]) == 2
    assert judged["greedy_level"] == (
        judged["vs_greedy_ci95"][1] >= 0.5 and judged["vs_random"] >= 0.95
    )
    assert "--checkpoint-every 4096" in data["meta"]["train_command"]
    assert "judged: the model of step 4,096" in capsys.readouterr().out


def test_bad_judge_options_are_refused():
    with pytest.raises(SystemExit) as stop:
        train_speed.main(["--judge", "0"])
    assert stop.value.code == 2
