"""benchmarks/pipelines.py trains each run under an interpreter that has its library, once per
training seed, judges every saved model itself on an evaluation seed it draws (never a training
seed), and writes the JSON and the tables; a run whose library no interpreter has is a row saying
so, not a failure. (A short budget: the learning targets are the benchmark's default run, not a
test.)"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def pipelines(*flags: str, timeout: float) -> subprocess.CompletedProcess:
    """``python benchmarks/pipelines.py FLAGS`` from the project root, its output captured."""
    return subprocess.run(
        [sys.executable, "benchmarks/pipelines.py", *flags],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs the vector extra")
def test_the_benchmark_runs_every_seed_judges_on_its_own_seed_and_reports_what_it_cannot_run(
    tmp_path,
):
    report = tmp_path / "pipelines.json"
    short = "--steps 1024 --envs 64 --n-steps 16 --eval-every 0 --final-deals 2"
    absent = next(
        name
        for name, module in (("agilerl_ppo", "agilerl"), ("rllib_ppo", "ray"))
        if importlib.util.find_spec(module) is None
    )
    done = pipelines(
        *("--only", "cleanrl_ppo", absent, "--seeds", "3", "4", "--eval-deals", "2"),
        *("--runs", str(tmp_path / "runs"), "--json", str(report)),
        *("--example-args", short),
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    written = json.loads(report.read_text())
    assert written["eval_seed"] not in (3, 4) and written["eval_deals"] == 2
    ran, skipped = written["results"]["cleanrl_ppo"], written["results"][absent]
    assert [row["seed"] for row in ran] == [3, 4]
    for row in ran:
        assert row["status"] == "ok" and row["run"] == "cleanrl_ppo"
        assert row["vs_greedy"]["games"] == row["vs_random"]["games"] == 4
        assert row["target"]["wall_within_15_min"] and row["measured_wall_seconds"] > 0
        assert row["cpu_seconds"] > 1  # the run's process: it imported torch and trained
        seed_dir = tmp_path / "runs" / "cleanrl_ppo_p2" / f"seed{row['seed']}"
        assert Path(row["model"]) == seed_dir / "model.safetensors"
        assert "--seed" in row["command"]
    assert skipped[0]["status"].startswith("not run: no --python has")
    assert "| `python examples/cleanrl_ppo.py --seed 3 --steps 1024" in done.stdout
    assert f"| {absent} |" in done.stdout
    assert "| cleanrl_ppo | 3, 4 |" in done.stdout  # the per-run summary with the worst seed


def test_an_evaluation_seed_that_is_also_a_training_seed_is_refused(tmp_path):
    done = pipelines(
        *("--only", "cleanrl_ppo", "--seeds", "0", "1", "--eval-seed", "1"),
        *("--json", str(tmp_path / "x.json")),
        timeout=120,
    )
    assert done.returncode != 0 and "also a training seed" in done.stderr
    assert not (tmp_path / "x.json").exists()


def _pipelines_module():
    """benchmarks/pipelines.py as a module (it is a script, not a package)."""
    spec = importlib.util.spec_from_file_location(
        "pipelines_bench", ROOT / "benchmarks/pipelines.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_example_is_a_run_of_the_overview():
    bench = _pipelines_module()
    examples = {p.stem for p in (ROOT / "examples").glob("*_ppo.py")}
    scripts = {Path(script).stem for script, _, _ in bench.RUNS.values()}
    assert examples <= scripts, examples - scripts
    assert bench.RUNS["jax_ppo"][0] == "examples/jax_ppo.py"


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="needs the vector extra")
def test_a_model_is_judged_in_one_seat_of_its_own_game_as_evaluate_one_seat_judges_it(tmp_path):
    """judge() reads the game from the model's sidecar (a variant's run is judged in its own
    game) and gives the figures of ``evaluate.py --one-seat`` on the same seed: one code."""
    from agents.evaluation import evaluate
    from agents.training.export import export_mlp
    from trash_env.observation import observation_size
    from trash_env.rules import Rules

    rng = np.random.default_rng(0)
    kings = Rules(num_players=3, wilds="kings")
    layers = [
        (rng.normal(size=(13, observation_size(3))).astype(np.float32), np.zeros(13, np.float32))
    ]
    model = export_mlp(tmp_path / "kings3.safetensors", layers, rules=kings, activation="tanh")
    figures = _pipelines_module().judge(model, 2, 5)
    for opponent in ("greedy", "random"):
        one = evaluate([str(model), opponent], kings, deals=2, seed=5, one_seat=True).one_seat
        assert one is not None and figures[f"vs_{opponent}"]["games"] == one["games"] == 6
        assert figures[f"vs_{opponent}"]["win_rate"] == round(one["win_rate"], 4)


def test_rules_args_take_rules_flags_only_and_name_each_run_by_its_variant(tmp_path):
    bench = _pipelines_module()
    assert bench.check_rules_args("--wilds kings --jokers", 2) == {"wilds": "kings", "jokers": True}
    for text, message in (
        ("--steps 10", "rules flags only"),
        ("--players 3", "with --players"),
        ("--wilds queens", "invalid choice"),
        ("--free-draws 3", "free_draws=3 needs num_players=2"),
    ):
        with pytest.raises(ValueError, match=message):
            bench.check_rules_args(text, 3 if "free" in text else 2)
    args = bench.parse_args(["--rules-args", "--wilds kings", "--players", "3"])
    assert bench.run_key("train", args) == "train --players 3 --wilds kings"
    assert bench.run_folder("train", args) == "train_p3_wilds_kings"
    plain = bench.parse_args([])
    assert (
        bench.run_key("train", plain) == "train" and bench.run_folder("train", plain) == "train_p2"
    )
    done = pipelines("--rules-args", "--steps 5", timeout=120)
    assert done.returncode == 2 and "--rules-args takes rules flags only" in done.stderr


def test_merge_adds_a_run_and_replaces_the_same_seeds(tmp_path):
    bench = _pipelines_module()
    path = tmp_path / "p.json"
    single = {"players": 2, "eval_seed": 9, "results": {"train": [{"seed": 0}]}}
    path.write_text(json.dumps(single))
    first = bench.merged(str(path), "jax_ppo", {"eval_seed": 11}, [{"seed": 1}])
    assert first["runs"] == {"train": {"players": 2, "eval_seed": 9}, "jax_ppo": {"eval_seed": 11}}
    assert first["results"] == {"train": [{"seed": 0}], "jax_ppo": [{"seed": 1}]}
    path.write_text(json.dumps(first))
    again = bench.merged(str(path), "jax_ppo", {"eval_seed": 12}, [{"seed": 2}])
    assert again["runs"]["jax_ppo"] == {"eval_seed": 12}
    assert again["results"] == {"train": [{"seed": 0}], "jax_ppo": [{"seed": 1}, {"seed": 2}]}
    path.write_text(json.dumps(again))
    rerun = bench.merged(str(path), "jax_ppo", {}, [{"seed": 1, "eval_seed": 13}, {"seed": 0}])
    assert rerun["results"]["jax_ppo"] == [{"seed": 0}, {"seed": 1, "eval_seed": 13}, {"seed": 2}]
    fresh = bench.merged(str(tmp_path / "none.json"), "train", {}, [])
    assert fresh["results"] == {"train": []}
