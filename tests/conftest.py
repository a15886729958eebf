"""Shared pytest setup: make ``tests/helpers.py`` importable whatever pytest's import mode, and
mark the slow cases of tests that are otherwise quick (the second tier, ``pytest -m slow``)."""

import sys
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# Parametrized cases slow where their siblings are quick, by the start of their test id: the
# snippets of docs/jax.md compile the JAX engine (minutes on a loaded 2-core machine).
SLOW_CASES = ("tests/test_docs.py::test_python_blocks_run_as_pasted[docs/jax.md:",)


@pytest.hookimpl(tryfirst=True)  # before the -m selection
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW_CASES):
            item.add_marker(pytest.mark.slow)
