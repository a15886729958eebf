"""The base install (no extras, no torch) runs what it promises: evaluation works and every
console script either runs or says in one line which extra to install.

Needs a venv made without the system's packages and the project installed into it with no
extra (``.ci/run`` builds one)::

    python -m venv /work/venvs/base && /work/venvs/base/bin/pip install -e .
    TRASH_BASE_VENV=/work/venvs/base pytest tests/test_base_install.py
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

VENV = os.environ.get("TRASH_BASE_VENV")
pytestmark = pytest.mark.skipif(
    not VENV,
    reason="set TRASH_BASE_VENV to a venv holding the base install (.ci/run builds one)",
)


def _bin(name: str) -> str:
    return str(Path(VENV or "") / "bin" / name)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=cwd, env=env)


def test_the_venv_is_a_base_install(tmp_path):
    result = _run(
        [
            _bin("python"),
            "-c",
            "import importlib.util as u, sys; "
            "print(sys.prefix != sys.base_prefix, "
            "[m for m in ('torch', 'matplotlib', 'numba') if u.find_spec(m)])",
        ],
        tmp_path,
    )
    assert result.stdout.strip() == "True []", result.stdout + result.stderr


@pytest.mark.parametrize("command", ["trash-evaluate", "evaluate.py"])
def test_evaluation_runs_on_the_base_install(command, tmp_path):
    program = (
        [_bin(command)] if command.startswith("trash-") else [_bin("python"), str(ROOT / command)]
    )
    result = _run(
        [*program, "--agents", "greedy", "random", "--games", "20", "--json", "r.json"], tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "greedy" in result.stdout and "TrueSkill" in result.stdout
    assert (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["trash-train"],
            "trash-train: error: training needs torch, stable_baselines3, sb3_contrib, "
            'matplotlib, which are not installed: pip install "trash-env[train]"',
        ),
        (
            ["trash-evaluate", "--agents", "greedy", "random", "--png", "r.png"],
            "trash-evaluate: error: --png needs matplotlib, which is not installed: "
            'pip install "trash-env[plot]"',
        ),
        (
            ["trash-evaluate", "--agents", "greedy", "random", "--backend", "ray"],
            "trash-evaluate: error: --backend ray needs ray, which is not installed: "
            'pip install "trash-env[ray]"',
        ),
        (
            ["python", str(ROOT / "examples" / "jax_ppo.py")],
            "python examples/jax_ppo.py: error: needs jax, optax, matplotlib, not installed: "
            'pip install "trash-env[jax]"',
        ),
    ],
)
def test_what_needs_an_extra_says_which_in_one_line_before_any_work(args, line, tmp_path):
    result = _run([_bin(args[0]), *args[1:]], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [line]
    assert result.stdout == "" and os.listdir(tmp_path) == []


@pytest.mark.parametrize("console", ["trash-play", "trash-web"])
def test_the_other_console_scripts_run(console, tmp_path):
    result = _run([_bin(console), "--help"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: {console} ")
