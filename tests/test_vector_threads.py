"""The parallel kernels' threads wait asleep (trash_env/vector/_threads.py): with GNU OpenMP
loaded before the engine (as ``import torch`` does) numba runs on its ``workqueue`` layer, which
the kernels, holding the GIL, use safely from several threads at once."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")

# Loads GNU OpenMP first, as torch does (it ships the same libgomp.so.1), then plays a
# tournament large enough for the parallel kernels (512 games or more), then reports.
PROBE = """
import ctypes, os, sys
if sys.argv[1] == "gomp-first":
    ctypes.CDLL("libgomp.so.1")
import numba
from agents.evaluation import evaluate
from trash_env.vector import _kernels
evaluate(["greedy", "random"], deals=300)
print(_kernels.THREADING_LAYER, numba.threading_layer(), os.environ.get("OMP_WAIT_POLICY"))
"""


def _probe(order: str, **env: str) -> list[str]:
    environment = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER")
    }
    out = subprocess.run(
        [sys.executable, "-c", PROBE, order],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env=environment | env,
    )
    return out.stdout.split()


def _gomp_available() -> bool:
    try:
        ctypes.CDLL("libgomp.so.1")
    except OSError:
        return False
    return True


needs_gomp = pytest.mark.skipif(not _gomp_available(), reason="GNU OpenMP is not installed")


@needs_gomp
def test_openmp_loaded_first_gives_the_workqueue_layer() -> None:
    assert _probe("gomp-first") == ["workqueue", "workqueue", "PASSIVE"]


def test_otherwise_numba_chooses_and_openmp_waits_asleep() -> None:
    chosen, layer, policy = _probe("engine-first")
    assert chosen == "None" and layer != "workqueue" and policy == "PASSIVE"


@needs_gomp
def test_the_users_settings_stand() -> None:
    assert _probe("gomp-first", OMP_WAIT_POLICY="ACTIVE") == ["None", "omp", "ACTIVE"]
    chosen, layer, _ = _probe("gomp-first", NUMBA_THREADING_LAYER="omp")
    assert (chosen, layer) == ("None", "omp")


@needs_gomp
def test_threads_share_the_workqueue_layer() -> None:
    """Four threads playing large tournaments at once (parallel kernels in each) neither abort
    (workqueue refuses concurrent launches; the kernels hold the GIL) nor change a result."""
    code = """
import ctypes, threading
ctypes.CDLL("libgomp.so.1")
import numba
from agents.evaluation import evaluate
alone = [evaluate(["greedy", "random"], deals=300, seed=s).to_json() for s in range(4)]
together = [None] * 4
def play(s):
    together[s] = evaluate(["greedy", "random"], deals=300, seed=s).to_json()
threads = [threading.Thread(target=play, args=(s,)) for s in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print(numba.threading_layer(), together == alone)
"""
    environment = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY",)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=environment
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["workqueue", "True"]
