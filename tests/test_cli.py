"""The command lines as users meet them: help texts written for users, a bad flag answered by
one short usage line and the reason, each program named the way it was started, and the
examples answering --help without their library (trash_env/cli.py's Parser)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest
from helpers import ROOT

from trash_env import Rules
from trash_env.cli import flag_help

# Every command line: (how it is started, its console script, how to build its parser).
PROGRAMS = {
    "evaluate.py": ("python evaluate.py", "trash-evaluate", "agents.evaluation.cli"),
    "train.py": ("python train.py", "trash-train", "agents.training.cli"),
    "agents.play": ("python -m agents.play", "trash-play", "agents.play.game"),
    "agents.web": ("python -m agents.web", "trash-web", "agents.web.__main__"),
}
COMMANDS = {
    "evaluate.py": [str(ROOT / "evaluate.py")],
    "train.py": [str(ROOT / "train.py")],
    "agents.play": ["-m", "agents.play"],
    "agents.web": ["-m", "agents.web"],
}


def _run(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        **kwargs,
    )


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_help_speaks_to_users(program):
    result = _run([*COMMANDS[program], "--help"])
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith(f"usage: {PROGRAMS[program][0]} ")
    assert "%%" not in text and "None" not in text and "000's" not in text
    # No Python field names: an option is named by its flag (--losers-reveal).
    for field in Rules.option_names():
        if "_" in field:
            assert field not in text, field


def test_evaluate_help_shows_a_plain_percent_sign():
    assert "95% Wilson" in _run(COMMANDS["evaluate.py"] + ["--help"]).stdout


def test_rules_flag_help_names_flags_and_says_what_an_unset_flag_means():
    docs = flag_help()
    assert set(docs) == set(Rules.option_names())
    assert "half the players" in docs["num_decks"] and "None" not in docs["num_decks"]
    assert "no limit" in docs["max_deals"]
    assert "--losers-reveal" in docs["free_draws"] and "--wilds" in docs["jokers"]


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_bad_flag_prints_one_short_usage_line_then_the_reason(program):
    required = ["--agents", "greedy", "random"] if program == "evaluate.py" else []
    result = _run([*COMMANDS[program], *required, "--no-such-flag"])
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    prog = PROGRAMS[program][0]
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith(f"usage: {prog} ") and lines[0].endswith("[options]  (see --help)")
    assert lines[1] == f"{prog}: error: unrecognized arguments: --no-such-flag"


def test_a_refused_value_after_parsing_is_answered_alike(tmp_path):
    result = _run(COMMANDS["evaluate.py"] + ["--agents", "greedy", "random", "--json", "/dev/null"])
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "usage: python evaluate.py --agents SPEC [SPEC ...] [options]  (see --help)",
        "python evaluate.py: error: --json: '/dev/null' is a device; give a regular file",
    ]


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_a_console_script_names_itself(program, monkeypatch):
    import importlib

    command, console, module = PROGRAMS[program]
    build_parser = importlib.import_module(module).build_parser
    monkeypatch.setattr(sys, "argv", [f"/venv/bin/{console}"])
    assert build_parser().prog == console
    monkeypatch.setattr(sys, "argv", ["whatever.py"])
    assert build_parser().prog == command


# Run an example with its library made unimportable, as on an install without its extra.
_WITHOUT = textwrap.dedent(
    """
    import importlib.abc, runpy, sys
    BLOCKED = set(sys.argv[1].split(","))

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Block())
    script = sys.argv[2]
    sys.argv = sys.argv[2:]
    runpy.run_path(script, run_name="__main__")
    """
)
EXAMPLES = {
    "cleanrl_ppo": ("torch", 'pip install "trash-env[train]"'),
    "rllib_ppo": ("ray,torch", 'pip install "trash-env[rllib]"'),
    "tianshou_ppo": ("tianshou,torch", 'pip install "trash-env[tianshou]"'),
    "torchrl_ppo": ("torchrl,tensordict,torch", 'pip install "trash-env[torchrl]"'),
    "agilerl_ppo": ("agilerl,torch", 'pip install "trash-env[vector,plot]" "agilerl==2.58.0"'),
    "openspiel_ismcts": ("pyspiel,open_spiel", 'pip install "trash-env[openspiel]"'),
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_an_example_answers_help_without_its_library_and_names_the_install(name):
    blocked, install = EXAMPLES[name]
    script = str(ROOT / "examples" / f"{name}.py")
    helped = _run(["-c", _WITHOUT, blocked, script, "--help"])
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith(f"usage: python examples/{name}.py ")
    assert "--seed" in helped.stdout and helped.stderr == ""
    assert "None" not in helped.stdout and "%%" not in helped.stdout
    bad = _run(["-c", _WITHOUT, blocked, script, "--seed", "x"])
    assert bad.returncode == 2 and "argument --seed" in bad.stderr
    plain = _run(["-c", _WITHOUT, blocked, script])
    assert plain.returncode == 2
    lines = plain.stderr.splitlines()
    assert len(lines) == 1, plain.stderr
    assert lines[0].startswith(f"python examples/{name}.py: error: needs ") and install in lines[0]
    assert re.search(r"needs [a-z_, ]+, not installed", lines[0])
