"""Shared pytest setup: make ``tests/helpers.py`` importable whatever pytest's import mode,
mark the slow cases of tests that are otherwise quick (the second tier, ``pytest -m slow``),
give the session one JAX compilation cache (its workers' too), count the cores pytest-xdist's
``-n auto`` may use, and the ``web`` fixture the web tests share."""

import importlib.util
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# Parametrized cases slow where their siblings are quick, by their test ids: the snippets of
# docs/jax.md compile the JAX engine (17-24 s on an idle 2-core machine, minutes under load;
# issue 40). The differential harness checks the engines after every decision of many games:
# the first tier keeps the standard game on the numba kernels' one-core form (their every-core
# form gives its bits after every step: test_parallel_kernels_give_the_serial_bits) and the
# illegal actions of both forms; the other families, the every-core form's standard game and
# every case of the JAX engine (scheduled or plain rules: each compiles it) are in the second.
SLOW_CASES = re.compile(
    r"tests/test_docs\.py::test_python_blocks_run_as_pasted\[docs/jax\.md:"
    r"|tests/test_vector_differential\.py::test_engine_matches_reference"
    r"\[(?!standard-numba-one-core\])"
    r"|tests/test_vector_differential\.py::test_illegal_actions_change_nothing\[jax(-rules)?\]"
)


# JAX's persistent compilation cache, for the test process and every subprocess it starts (they
# inherit the environment): a program compiled again, by a fresh jax.jit of the same function
# in another test, a docs snippet or an example, is read back instead (on the CPU, the JAX
# engine's init and step: 19-23 s of CPU compiled, 3-5 s read back; docs/development.md). Every
# program is kept, however quick its compile. A folder of the session's own, removed at its end,
# unless JAX_COMPILATION_CACHE_DIR is set already (.ci/run shares one between the two tiers).
# Under pytest-xdist the controller makes it before it starts the workers, which inherit it: one
# cache per run. A size bound (far above what a run writes) makes JAX lock the folder around
# every read and write (its LRUCache; filelock comes with torch): without one, a worker could
# read an entry that another is still writing, warn and compile again.
_JAX_CACHE_SETTINGS = {
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}
if importlib.util.find_spec("filelock") is not None:  # else JAX refuses a size bound
    _JAX_CACHE_SETTINGS["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(16 * 2**30)
_own_jax_cache: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
        _own_jax_cache.append(tempfile.mkdtemp(prefix="trash-env-jax-cache-"))
        os.environ["JAX_COMPILATION_CACHE_DIR"] = _own_jax_cache[0]
    for name, value in _JAX_CACHE_SETTINGS.items():
        os.environ.setdefault(name, value)
    if "jax" in sys.modules:  # imported before this hook (a plugin): it read its settings
        import jax

        jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
        for name, value in _JAX_CACHE_SETTINGS.items():
            jax.config.update(name.lower(), float(value) if "TIME" in name else int(value))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: one worker per core this process may run on (its CPU affinity, and a
    cgroup's CPU quota where one is set), where pytest-xdist would count the host's physical
    cores whenever psutil is installed, too many in a container and too few with hyperthreads.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist's own reading of it
    return usable_cores()


CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # "QUOTA PERIOD" in microseconds, or "max ..."


def usable_cores() -> int:
    """The cores this process may run on: its affinity, bounded by a cgroup v2 CPU quota."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        quota, period = CGROUP_CPU_MAX.read_text().split()[:2]
        cores = min(cores or 1, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):  # no cgroup v2 file, or "max": no quota
        pass
    return max(1, cores or 1)


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _own_jax_cache:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get("JAX_COMPILATION_CACHE_DIR") == folder:
            del os.environ["JAX_COMPILATION_CACHE_DIR"]
    _own_jax_cache.clear()


@pytest.hookimpl(tryfirst=True)  # before the -m selection
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_CASES.match(item.nodeid):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def web(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A trash-web server for one test (``tests/web_support.py``): its game logs go to
    ``tmp_path/logs``, its reports folder is ``tmp_path/reports`` (made, empty). Yields the
    JSON client (``client.port`` for raw sockets) and the server's ``Config``."""
    from web_support import serving  # imported here: only the web tests load the server

    reports = tmp_path / "reports"
    reports.mkdir()
    with serving(tmp_path / "logs", reports) as (client, config):
        yield client, config
