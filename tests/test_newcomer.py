"""What a newcomer meets in the first hour (issue 28, "Why" 11): pytest says why it skips, the
README names what the browser tests and train.py need and leave, and the pictures of the table
speak the same words in the env render, the terminal game and the replay.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from agents.play.human import draw_table, seat_names
from agents.play.replay import DealTracker
from trash_env.engine import ABSENT, EVENT_KINDS, Event, Game
from trash_env.render import render_text
from trash_env.rules import Rules
from trash_env.text import ABSENT_MARK, describe, describe_event, legend, result_text
from trash_env.view import PublicView

ROOT = Path(__file__).resolve().parent.parent
# An f-string that puts 's after a player's name ("{names[p]}'s view", "{who}'s hand").
POSSESSIVE = re.compile(r"\{[^{}]*(name|who)[^{}]*\}['’]s\b")
TESTS = ROOT / "tests"

# ---------------------------------------------------------------------- skips


def _call_name(node: ast.Call) -> str:
    return ast.unparse(node.func)


def test_every_skip_in_the_suite_gives_its_reason():
    # importorskip without reason= says only "could not import"; a skipif or skip mark without
    # reason= says nothing at all.
    bare = []
    for path in sorted(TESTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            keywords = {k.arg for k in node.keywords}
            if (
                name.endswith(("importorskip", "mark.skipif", "mark.skip"))
                and "reason" not in keywords
            ):
                bare.append(f"{path.name}:{node.lineno}: {name}")
            if name == "pytest.skip" and not node.args and "reason" not in keywords:
                bare.append(f"{path.name}:{node.lineno}: {name}")
    assert not bare, "skips without a reason:\n" + "\n".join(bare)


def test_pytest_lists_every_skip_with_its_reason(tmp_path):
    # With the repository's own settings (pyproject.toml's addopts), a skipped test is listed
    # at the end with the reason it gives.
    test = tmp_path / "test_skips.py"
    test.write_text(
        "import pytest\n\n"
        "def test_needs_a_library():\n"
        "    pytest.importorskip('no_such_module_xyz', reason='needs xyz (the xyz extra)')\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), str(test)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SKIPPED [1] test_skips.py:4: needs xyz (the xyz extra)" in result.stdout


# ---------------------------------------------------------------------- the README


def test_the_readme_names_the_browser_and_what_train_py_leaves():
    text = " ".join((ROOT / "README.md").read_text().split())
    assert "`chromium` and `chromium-driver`" in text  # what the browser tests need
    assert "apt-get install chromium chromium-driver" in text
    assert "`model_checkpoints/`" in text and "`model_pool/`" in text  # train.py's outputs
    assert "`runs/default/`" in text


# ---------------------------------------------------------------------- the pictures


def _mid_game() -> Game:
    """Three players, layouts of 4 and more: absent slots, face-down and face-up cards."""
    game = Game(Rules(num_players=3, start_size=4), seed=5)
    rng = np.random.default_rng(5)
    for _ in range(30):
        if game.done:
            break
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    assert not game.done and any(s == ABSENT for s in game.state[0])
    return game


def test_every_picture_of_the_table_speaks_the_same_words():
    # The env render (trash_env.render) and the terminal table (agents.play.human) mark a slot
    # outside the layout the same way, head each layout with the same line, and share the key.
    game = _mid_game()
    names = ["A", "B", "C"]
    rendered = render_text(game, names).splitlines()
    terminal = draw_table(PublicView(game, 0), names).splitlines()
    for p, name in enumerate(names):
        head = next(line for line in rendered if line[2:].startswith(f"{name}:"))
        assert head in terminal  # "> B: layout of 4, 0 rounds won, 3 face-down"
        assert f"{name}: layout of {game.sizes[p]}, " in head
        absent = sum(s == ABSENT for s in game.state[p])
        i = rendered.index(head)
        drawn = " ".join(rendered[i + 1 : i + 3]).split()
        assert drawn.count(ABSENT_MARK) == absent
        j = terminal.index(head)
        assert " ".join(terminal[j + 1 : j + 5]).split().count(ABSENT_MARK) == absent
    assert legend(game.wild) in rendered and legend(game.wild) in terminal
    assert ABSENT_MARK == "--" and " .. " not in "\n".join(rendered + terminal)
    # The replay's pictures and the event sentences say "layout of" too.
    tracker = DealTracker(game.rules)
    for event in game.events:
        tracker.feed(event)
    picture = tracker.picture(names, next_deal=False)
    assert all("layout of" in line for line in picture[1::3])
    assert describe_event(Event("shrink", 0, -1, 3), names) == "A now has a layout of 3"


def test_you_is_never_made_possessive():
    # "You" is a player's name on the terminal: no sentence or picture says "You's".
    game = _mid_game()
    names = seat_names(3, 0, ["human", "random", "random"])
    assert names[0] == "You"
    texts = [render_text(game, names), draw_table(PublicView(game, 0), names)]
    for kind in EVENT_KINDS:
        texts.append(describe(Event(kind, 0, 5, 4), names))
    texts.append(result_text(False, [0], [1, 2, 2], [3, 1, 0], names))
    tracker = DealTracker(game.rules)
    for event in game.events:
        tracker.feed(event)
    texts += tracker.picture(names)
    assert not [t for t in texts if "You's" in t or "You’s" in t]
    # Nor does any source file outside the web page build a possessive from a name it does not
    # know (the web page's "You's view" is its own, agents/web).
    for path in [*ROOT.glob("trash_env/**/*.py"), *ROOT.glob("agents/**/*.py")]:
        if "web" in path.relative_to(ROOT).parts:
            continue
        for line in path.read_text().splitlines():
            assert not POSSESSIVE.search(line), f"{path}: {line.strip()}"
