"""Evaluation on Ray (agents/evaluation/ray_backend.py): the same JSON report as the local backend
for the
same seed, on a local Ray instance of 2 CPUs that the test starts. Skips without ray."""

from __future__ import annotations

import json

import pytest

from agents.evaluation import evaluate
from trash_env.rules import Rules

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # slow: the second tier
ray = pytest.importorskip("ray", reason="ray is not installed (the 'ray' extra)")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_report_identical_to_local_backend(local_ray):
    rules = Rules(num_players=3)
    kwargs = dict(games=60, seed=5, chunk=2, keep_results=True)
    local = evaluate(["greedy", "random", "counting"], rules, workers=1, **kwargs)
    remote = evaluate(["greedy", "random", "counting"], rules, workers=2, backend="ray", **kwargs)
    assert len(remote.results) == local.games > 0
    assert remote.results == local.results  # every game, in deal order
    # the same figures; only the report's note of the engine differs (Ray plays the reference)
    assert {**remote.to_json(), "engine": None} == {**local.to_json(), "engine": None}
    other_seed = evaluate(
        ["greedy", "random", "counting"],
        rules,
        workers=2,
        backend="ray",
        games=60,
        seed=6,
        chunk=2,
        keep_results=True,
    )
    assert other_seed.results != local.results  # the comparison can tell seeds apart


def test_cli_json_identical(local_ray, tmp_path):
    from agents.evaluation import cli

    args = [
        "--agents",
        "greedy",
        "random",
        "--games",
        "40",
        "--seed",
        "3",
        "--quiet",
        "--no-progress",
        "--workers",
        "2",
    ]
    assert cli.main([*args, "--json", str(tmp_path / "local.json")]) == 0
    assert cli.main([*args, "--backend", "ray", "--json", str(tmp_path / "ray.json")]) == 0
    local = json.loads((tmp_path / "local.json").read_text())
    remote = json.loads((tmp_path / "ray.json").read_text())
    assert remote.pop("engine") == "reference (backend ray)"
    assert local.pop("engine").startswith("batched")
    assert remote == local


def test_bad_backend_named():
    with pytest.raises(ValueError, match="backend must be one of 'local', 'ray'"):
        evaluate(["greedy", "random"], games=2, backend="dask")
