"""Shared pytest setup: make ``tests/helpers.py`` importable whatever pytest's import mode, and
mark the slow cases of tests that are otherwise quick (the second tier, ``pytest -m slow``)."""

import re
import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# Parametrized cases slow where their siblings are quick, by their test ids: the snippets of
# docs/jax.md compile the JAX engine (17-24 s on an idle 2-core machine, minutes under load;
# issue 40); the differential harness checks the engines after every decision of many games,
# and keeps the standard game's family (every engine) in the first tier, the other nine
# families (each with a JAX compile of its own) and the JAX plain rules' own compiles in the
# second.
SLOW_CASES = re.compile(
    r"tests/test_docs\.py::test_python_blocks_run_as_pasted\[docs/jax\.md:"
    r"|tests/test_vector_differential\.py::test_engine_matches_reference\[(?!standard-)"
    r"|tests/test_vector_differential\.py::test_\w+\[(standard-)?jax-rules\]"
)


@pytest.hookimpl(tryfirst=True)  # before the -m selection
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_CASES.match(item.nodeid):
            item.add_marker(pytest.mark.slow)
