"""Shared pytest setup: make ``tests/helpers.py`` importable whatever pytest's import mode."""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
