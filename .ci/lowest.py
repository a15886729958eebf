"""Print the lowest versions pyproject.toml allows, one ``name==version`` a line, for pip.

Why: the declared floors must be true. ``.ci/run`` installs exactly these into a fresh venv and
runs the tests that need no torch there. Takes the core dependencies plus the named extras'
direct requirements (``python .ci/lowest.py test-tools`` adds pytest, pytest-xdist and
hypothesis); every requirement must carry a ``>=`` floor, or this fails loudly.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as a package
    import tomli as tomllib

# The test tools the env tests need (pytest-xdist: pyproject's addopts pass it -n); the rest of
# the test extra (torch, SB3) is not installed.
TEST_TOOLS = ("pytest", "pytest-xdist", "hypothesis")
FLOOR = re.compile(r"^\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*>=\s*([0-9][0-9A-Za-z.]*)\s*$")


def floors(requirements: list[str]) -> dict[str, str]:
    """name -> lowest version of every requirement, which must read ``name>=version``."""
    found = {}
    for requirement in requirements:
        match = FLOOR.match(requirement)
        if match is None:
            raise SystemExit(f"lowest.py: requirement {requirement!r} has no plain >= floor")
        found[match.group(1).lower()] = match.group(3)
    return found


def main(argv: list[str]) -> int:
    project = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    wanted = floors(project["project"]["dependencies"])
    if "test-tools" in argv[1:]:
        test = project["project"]["optional-dependencies"]["test"]
        tools = [r for r in test if re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0] in TEST_TOOLS]
        extra = floors(tools)
        for name in TEST_TOOLS:
            wanted[name] = extra[name]
    for name, version in wanted.items():
        print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
