"""Shared pytest setup: make ``tests/helpers.py`` importable whatever pytest's import mode,
mark the slow cases of tests that are otherwise quick (the second tier, ``pytest -m slow``),
and the ``web`` fixture the web tests share."""

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# Parametrized cases slow where their siblings are quick, by their test ids: the snippets of
# docs/jax.md compile the JAX engine (17-24 s on an idle 2-core machine, minutes under load;
# issue 40); the differential harness checks the engines after every decision of many games,
# and keeps the standard game's family and the illegal actions of the numba kernels in the
# first tier; the other nine families and every case of the JAX engine (scheduled or plain
# rules: each compiles it) are in the second.
SLOW_CASES = re.compile(
    r"tests/test_docs\.py::test_python_blocks_run_as_pasted\[docs/jax\.md:"
    r"|tests/test_vector_differential\.py::test_engine_matches_reference\[(?!standard-)"
    r"|tests/test_vector_differential\.py::test_\w+\[(standard-)?jax(-rules)?\]"
)


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
