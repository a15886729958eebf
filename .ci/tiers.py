"""Check that the README's two test commands together run every test: ``pytest`` (every test
not marked ``slow``, by pyproject.toml's addopts) and ``pytest -m slow``.

Why: a test left out of both tiers would never run in CI. Collects three times (no test runs),
at once (each takes about 12 s of CPU): with no mark expression (``-m ""``: every test), with
the first tier's and with ``-m slow``; the two tiers must be disjoint and add up to every test.
Exits 1 naming what differs.
"""

from __future__ import annotations

import subprocess
import sys

TIERS = {"every test": [], "pytest": None, "pytest -m slow": ["-m", "slow"]}


def collecting(marks: list[str] | None) -> tuple[list[str], subprocess.Popen]:
    """pytest's command with these ``-m`` arguments (None: pyproject's own), started."""
    # One line per test (addopts' -q); -p no:randomly: the same order each time.
    args = [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:randomly"]
    args += ["-m", ""] if marks == [] else (marks or [])
    return args, subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def collected(args: list[str], run: subprocess.Popen) -> set[str]:
    """The node ids that ``run``, a ``collecting`` one, listed."""
    out, err = run.communicate()
    if run.returncode not in (0, 5):  # 5: nothing collected
        raise SystemExit(f"tiers.py: {' '.join(args[1:])} failed:\n{out}{err}")
    return {line for line in out.splitlines() if "::" in line}


def main() -> int:
    runs = [collecting(marks) for marks in TIERS.values()]  # all three at once
    every, quick, slow = (collected(*run) for run in runs)
    left_out = sorted(every - quick - slow)
    both = sorted(quick & slow)
    print(f"tests: {len(every)} in all, {len(quick)} in `pytest`, {len(slow)} in `pytest -m slow`")
    if not every or left_out or both or len(quick) + len(slow) != len(every):
        print("in neither tier:", *left_out[:20], sep="\n  ")
        print("in both tiers:", *both[:20], sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
