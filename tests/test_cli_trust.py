"""Hostile inputs to the play and evaluate command lines (issue 41, smaller points), grouped
by surface: ``q`` at a human seat ends a script quietly; a flag's parse-time message and its
range check name one rule."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agents.evaluation.cli import main as evaluate_main
from agents.play.human import HumanQuit

ROOT = Path(__file__).resolve().parents[1]


def _human_seat_snippet() -> str:
    """The ```python block of docs/play.md's "A human seat from Python"."""
    text = (ROOT / "docs" / "play.md").read_text()
    part = text[text.index("**A human seat from Python.**") :]
    return re.search(r"```python\n(.*?)```", part, re.S).group(1)


# ---------------------------------------------------------------------------- play


def test_q_in_the_docs_human_seat_snippet_ends_it_quietly():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", _human_seat_snippet()],
        input="q\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and result.stderr == ""
    assert result.stdout.rstrip().endswith("q")  # the answer echoed, then nothing more


def test_human_quit_is_a_clean_exit_that_callers_can_still_catch():
    with pytest.raises(HumanQuit) as caught:
        raise HumanQuit()
    assert isinstance(caught.value, SystemExit) and caught.value.code == 0


# ---------------------------------------------------------------------------- evaluate.py


@pytest.mark.parametrize("flag", ["--games", "--deals", "--workers"])
@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5"])
def test_a_count_flag_says_the_same_rule_for_text_and_for_zero(flag, value, capsys):
    with pytest.raises(SystemExit) as exited:
        code = evaluate_main(["--agents", "greedy", "random", flag, value, "--no-progress"])
        raise SystemExit(code)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert re.search(
        rf"{flag}:? must be an integer from 1 to [\d,]+, got '?{re.escape(value)}'?", err
    ), err
    assert "0 or more" not in err and "Traceback" not in err
