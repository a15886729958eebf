"""docs/benchmarks.md holds the figures of one benchmark run (benchmarks/page.py): the page and
the committed JSON files agree, the targets are judged from the figures, and train.py's output
is read as printed. Nothing here times anything."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import page  # noqa: E402  (benchmarks/page.py)
import train_speed  # noqa: E402  (benchmarks/train_speed.py)


def test_the_page_is_the_render_of_the_committed_run() -> None:
    assert page.main(["render", "--check"]) == 0, "run: python benchmarks/page.py render"
    text = page.PAGE.read_text()
    record = json.loads((page.HERE / page.RECORD).read_text())
    assert [step["name"] for step in record["steps"]] == list(page.FILES)  # one run, every step
    assert all(step["exit"] == 0 for step in record["steps"])
    assert record["steps"][0]["start"] in text and record["steps"][-1]["end"] in text


@pytest.fixture
def run_copy(tmp_path: Path) -> Path:
    for name in [page.RECORD, *page.FILES.values()]:
        shutil.copy(page.HERE / name, tmp_path / name)
    return tmp_path


def test_a_target_below_its_mark_is_printed_not_met(run_copy: Path) -> None:
    speed = json.loads((run_copy / page.FILES["evaluate_speed"]).read_text())
    row = next(r for r in speed["rows"] if r["case"] == "2p model file vs greedy")
    row["ratios"] = [6.0, 4.9]  # one pair below 5x
    row["ratio"] = 5.45
    (run_copy / page.FILES["evaluate_speed"]).write_text(json.dumps(speed))
    trained = json.loads((run_copy / page.FILES["train_speed"]).read_text())
    for step in trained["rows"]:
        step["seconds"] += 100.0
    trained["greedy_level"] = dict(trained["rows"][-1], vs_greedy=0.5)
    trained["judged"].update(seconds=trained["rows"][-1]["seconds"], met=False)
    (run_copy / page.FILES["train_speed"]).write_text(json.dumps(trained))
    text = page.render(run_copy)
    model = next(line for line in text.splitlines() if line.startswith("- 2p model file"))
    assert "lowest pair 4.90x" in model and model.endswith("**NOT met** (every pair must reach it)")
    levels = [line for line in text.splitlines() if line.startswith("Greedy's level")]
    assert len(levels) == 2 and levels[0].startswith("Greedy's level, judged")
    assert all("target at most 15 s: **NOT met**" in line for line in levels)


def test_the_markers_must_be_there_once(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="markers"):
        page.page_with("figures", "# a page without markers\n")
    body = f"intro\n{page.BEGIN}\nold figures\n{page.END}\nafter\n"
    assert page.page_with("NEW", body) == "intro\nNEW\nafter\n"


def test_train_py_lines_are_read_as_printed() -> None:
    lines = [
        "training 300000 steps (0 done) on 256 batched envs, opponents greedy, rules standard",
        "[0 steps, 0 steps/s] vs greedy: 0.000 [0.000, 0.009], vs random: 0.000 over 400 games"
        " each (0.4 s); no training episode finished since the last row",
        "[126976 steps, 15035 steps/s] vs greedy: 0.235 [0.196, 0.279], vs random: 0.970 over"
        " 400 games each (0.3 s); training win rate 0.1483, mean reward -5.2636",
        "[253952 steps, 20729 steps/s] vs greedy: 0.520 [0.471, 0.569], vs random: 0.990 over"
        " 400 games each (0.2 s); training win rate 0.37, mean reward -1.8238",
        "final: vs random: win rate 0.990 [0.985, 0.994] over 2000 games (1980.0 wins)",
        "final: vs greedy: win rate 0.499 [0.478, 0.521] over 2000 games (999.0 wins)",
    ]
    figures = train_speed.parse([(1.5 * i, line) for i, line in enumerate(lines)])
    assert [r["steps"] for r in figures["rows"]] == [0, 126976, 253952]
    assert figures["greedy_level"] == {
        "steps": 253952,
        "seconds": 4.5,
        "vs_greedy": 0.52,
        "vs_random": 0.99,
    }
    assert figures["final"]["greedy"] == {"win_rate": 0.499, "ci95": [0.478, 0.521], "games": 2000}
    assert train_speed.parse([(1.0, lines[2])])["greedy_level"] is None  # 0.235: not yet
