"""What a new user gets besides the code: the licence, one version, type hints shipped, a
changelog and the rule book inside the repository (the README points nowhere outside it)."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import trash_env
from trash_env.rules import Rules

ROOT = Path(__file__).resolve().parent.parent


def test_license_is_mit_as_pyproject_says():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "trash-env contributors" in text
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()


def test_version_is_written_once_and_is_the_installed_one():
    assert re.fullmatch(r"\d+\.\d+\.\d+", trash_env.__version__)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "trash_env.__version__" }' in pyproject
    assert not re.search(r'^version = "', pyproject, re.M)  # no second copy
    try:
        installed = importlib.metadata.version("trash-env")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout (the floors venv)
        return
    assert installed == trash_env.__version__


def test_changelog_names_the_releases():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert f"## [{trash_env.__version__}]" in text


def test_rule_book_is_inside_the_repository_and_the_readme_links_only_there():
    readme = (ROOT / "README.md").read_text()
    assert "../shared" not in readme and "/work/shared" not in readme
    assert "(docs/rules.md)" in readme
    rules = (ROOT / "docs" / "rules.md").read_text()
    for heading in (
        "## Cards",
        "## A turn",
        "## Variants",
        "## Information",
        "## Decisions this implementation takes",
    ):
        assert heading in rules
    for option in Rules.option_names():  # every option of the engine is in the rule book
        assert f"`{option}" in rules, option
    # Every test the rule book names exists.
    tests = "".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    for name in set(re.findall(r"`(test_\w+)`", rules)):
        assert f"def {name}(" in tests, name


@pytest.mark.slow
def test_wheel_ships_py_typed_the_version_and_the_licence(tmp_path):
    pytest.importorskip(
        "setuptools",
        minversion="68",
        reason="needs setuptools 68+, the build backend pyproject names",
    )
    # Built from a copy: setuptools leaves build/ and egg-info beside the sources.
    source = tmp_path / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("trash_env", "agents"):
        shutil.copytree(ROOT / package, source / package, ignore=skip)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (tmp_path / "dist").glob("trash_env-*.whl")
    assert wheel.name.startswith(f"trash_env-{trash_env.__version__}-")
    names = zipfile.ZipFile(wheel).namelist()
    assert "trash_env/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith("LICENSE") for n in names)
