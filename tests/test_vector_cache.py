"""numba's on-disk cache of the kernels cannot lie (trash_env/numba_cache.py, issue 41):
processes that compile at once on an empty cache leave a whole one; a planted bad entry (bytes
changed, another signature's code, an unreadable index) is compiled again with one line saying
so, and the answers stay right; a compilation waits for the cache's lock."""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")

ROOT = Path(__file__).resolve().parents[1]

# A small module compiled with the project's njit: one function, a signature per dtype.
MODULE = """
from trash_env.numba_cache import njit

@njit(cache=True, inline="always")
def twice(x):
    return x * 2

@njit(cache=True)
def total(a):
    s = a[0] * 0
    for v in a:
        s += twice(v)
    return s
"""
DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "float32", "float64")

# Computes total() for the given dtypes in order; prints ok, or the wrong answers.
CHILD = """
import sys
import numpy as np
import cachedmod
wrong = [t for t in sys.argv[1].split(",") if cachedmod.total(np.arange(1, 11).astype(t)) != 110]
print("wrong " + " ".join(wrong) if wrong else "ok")
print("misses", sum(cachedmod.total.stats.cache_misses.values()))
"""


def _setup(tmp_path: Path, module_dir: Path | None = None) -> dict[str, str]:
    """The environment of a child that imports ``cachedmod`` from ``module_dir`` (written there
    when None: ``tmp_path``) with numba's cache in ``tmp_path / "cache"``."""
    if module_dir is None:
        module_dir = tmp_path
        (tmp_path / "cachedmod.py").write_text(MODULE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(module_dir), str(ROOT)])
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def _start(env: dict[str, str], dtypes: list[str] | tuple[str, ...]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, ",".join(dtypes)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(env: dict[str, str], *dtypes: str) -> tuple[list[str], str]:
    child = _start(env, dtypes)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    return out.split("\n"), err


def _index(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache").glob("*/cachedmod.total-*.checked.nbi")
    return found


def _read_index(path: Path) -> tuple[object, bytes, dict]:
    with path.open("rb") as f:
        version = pickle.load(f)
        stamp, entries = pickle.loads(f.read())
    return version, stamp, entries


def _write_index(path: Path, version: object, stamp: bytes, entries: dict) -> None:
    with path.open("wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, entries), protocol=-1))


def _key_of(entries: dict, dtype: str) -> object:
    (key,) = (k for k in entries if f"Array({dtype}," in str(k[0]))
    return key


# What the tests of one planted fault start from: a cache holding these signatures, compiled once.
CACHED = ("int8", "int32", "int64", "float64")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``cachedmod.py`` and, in ``cache``, numba's cache of its ``CACHED``
    signatures (the cache's entries name the module's folder: children import it from here)."""
    folder = tmp_path_factory.mktemp("compiled")
    env = _setup(folder)
    lines, err = _run(env, *CACHED)
    assert lines[:2] == ["ok", f"misses {len(CACHED)}"], (lines, err)
    return folder


def _setup_cached(tmp_path: Path, compiled: Path) -> dict[str, str]:
    """A test's own copy of the ``compiled`` cache, which it may spoil."""
    shutil.copytree(compiled / "cache", tmp_path / "cache")
    return _setup(tmp_path, compiled)


@pytest.mark.slow
def test_processes_compiling_at_once_on_an_empty_cache_leave_a_whole_one(tmp_path: Path) -> None:
    env = _setup(tmp_path)
    for round_ in range(3):
        for stale in (tmp_path / "cache").glob("*/*"):
            stale.unlink()  # an empty cache each round
        orders = [DTYPES[k:] + DTYPES[:k] for k in range(0, 12, 2)]  # 6 processes at once
        children = [_start(env, order[::-1] if k % 2 else order) for k, order in enumerate(orders)]
        for child in children:
            out, err = child.communicate(timeout=600)
            assert child.returncode == 0 and out.startswith("ok"), (round_, out, err)
            assert "did not match" not in err, err
        # Every signature is in the cache and loads right, with nothing left to compile.
        lines, err = _run(env, *DTYPES)
        assert lines[:2] == ["ok", "misses 0"], (round_, lines, err)
        assert err == "", err


def test_bytes_changed_in_an_entry_are_compiled_again_with_one_line(
    tmp_path: Path, compiled: Path
) -> None:
    env = _setup_cached(tmp_path, compiled)
    _, _, entries = _read_index(_index(tmp_path))
    data = _index(tmp_path).parent / entries[_key_of(entries, "int64")][0]
    payload = bytearray(data.read_bytes())
    payload[len(payload) // 2] ^= 0xFF
    data.write_bytes(bytes(payload))
    lines, err = _run(env, "int64", "float64")
    assert lines[:2] == ["ok", "misses 1"], (lines, err)
    said = [line for line in err.splitlines() if "did not match" in line]
    assert len(said) == 1 and "does not match its checksum" in said[0], err
    assert "numba's cached total in " in said[0], said
    # Rebuilt: the next process loads it without a word.
    assert _run(env, "int64", "float64") == (["ok", "misses 0", ""], "")


def test_an_entry_holding_another_signatures_code_is_compiled_again(
    tmp_path: Path, compiled: Path
) -> None:
    """The state the concurrent first runs of issue 41 left: an index entry naming the code
    compiled for another record type (here: int8's code filed under float64, checksum right)."""
    env = _setup_cached(tmp_path, compiled)
    path = _index(tmp_path)
    version, stamp, entries = _read_index(path)
    entries[_key_of(entries, "float64")] = entries[_key_of(entries, "int8")]
    _write_index(path, version, stamp, entries)
    lines, err = _run(env, "float64", "int8")
    assert lines[:2] == ["ok", "misses 1"], (lines, err)
    said = [line for line in err.splitlines() if "did not match" in line]
    assert len(said) == 1 and "holds another signature" in said[0], err


def test_an_unreadable_index_is_compiled_again(tmp_path: Path, compiled: Path) -> None:
    env = _setup_cached(tmp_path, compiled)
    _index(tmp_path).write_bytes(b"\x80\x05not an index at all")
    lines, err = _run(env, "int32")
    assert lines[:2] == ["ok", "misses 1"], (lines, err)
    assert "its index cannot be read" in err, err
    assert _run(env, "int32") == (["ok", "misses 0", ""], "")


def test_a_compilation_waits_for_the_caches_lock(tmp_path: Path, compiled: Path) -> None:
    env = _setup_cached(tmp_path, compiled)  # the cache folder and its lock file exist
    lock = _index(tmp_path).parent / "trash_env.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        child = _start(env, ["int64", "uint16"])  # uint16 is not cached: it must compile
        time.sleep(8)
        assert child.poll() is None, child.communicate()  # waiting, not compiling
        fcntl.flock(held, fcntl.LOCK_UN)
    out, err = child.communicate(timeout=300)
    assert out.split("\n")[:2] == ["ok", "misses 1"], (out, err)
    assert "trash_env: compiling with numba, total first" in err, err


@pytest.mark.slow
def test_the_engines_kernels_compiled_at_once_by_four_processes_play_right(tmp_path: Path) -> None:
    """The incident itself: four evaluations on an empty cache at once, two record types
    (2 and 12 decks of capacity), twice; each evaluation's every game equals the reference
    engine's, and so do a fifth's, which finds everything cached."""
    code = (
        "import sys\n"
        "from agents.evaluation import evaluate\n"
        "from trash_env.rules import Rules\n"
        "rules = Rules(num_decks=int(sys.argv[1]))\n"
        "kw = dict(deals=6, seed=int(sys.argv[2]), keep_results=True)\n"
        "a = evaluate(['greedy', 'random', 'counting'], rules, engine='batched', **kw)\n"
        "b = evaluate(['greedy', 'random', 'counting'], rules, engine='reference', **kw)\n"
        "print('ok' if a.results == b.results and len(a.results) == 36 else 'wrong')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def start(decks: int, seed: int) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-c", code, str(decks), str(seed)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    for round_ in range(2):
        for stale in (tmp_path / "cache").glob("*/*"):
            stale.unlink()
        children = [start(2 if k % 2 else 3, k) for k in range(4)]
        for child in children:
            out, err = child.communicate(timeout=1200)
            assert child.returncode == 0 and out == "ok\n", (round_, out, err)
            assert "did not match" not in err, err
        for decks in (2, 3):
            child = start(decks, 9)
            out, err = child.communicate(timeout=600)
            assert out == "ok\n" and "compil" not in err, (round_, out, err)
