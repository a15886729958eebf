"""The test run on every core (pytest-xdist, pyproject's addopts): how many workers ``-n auto``
starts, and the one JAX compilation cache that a run's workers share (tests/conftest.py)."""

from __future__ import annotations

import importlib.util
import os

import conftest
import pytest

AFFINITY = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.parametrize(
    ("cpu_max", "cores"),
    [
        ("max 100000\n", AFFINITY),  # no quota: every core of the affinity
        ("50000 100000\n", 1),  # half a core: one worker, never none
        ("150000 100000\n", min(AFFINITY, 2)),  # 1.5 cores: rounded up
        ("10000000 100000\n", AFFINITY),  # a quota above the affinity: the affinity
        ("garbled", AFFINITY),  # unreadable: as if no quota
    ],
)
def test_auto_counts_the_cores_this_process_may_use(cpu_max, cores, tmp_path, monkeypatch):
    (tmp_path / "cpu.max").write_text(cpu_max)
    monkeypatch.setattr(conftest, "CGROUP_CPU_MAX", tmp_path / "cpu.max")
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    assert conftest.pytest_xdist_auto_num_workers(None) == cores


def test_auto_leaves_an_explicit_worker_count_to_pytest_xdist(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    assert conftest.pytest_xdist_auto_num_workers(None) is None  # xdist reads it itself


def test_a_worker_uses_the_runs_jax_cache_and_makes_none():
    folder = os.environ["JAX_COMPILATION_CACHE_DIR"]
    assert os.path.isdir(folder)
    if os.environ.get("PYTEST_XDIST_WORKER"):  # made by the controller, inherited
        assert conftest._own_jax_cache == []
    elif "trash-env-jax-cache-" in folder:  # a serial run's own, unless one was given
        assert conftest._own_jax_cache == [folder]
    if importlib.util.find_spec("filelock") is not None:  # with it, JAX locks the folder
        assert int(os.environ["JAX_COMPILATION_CACHE_MAX_SIZE"]) > 2**30
