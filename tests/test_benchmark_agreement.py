"""benchmarks/agreement.py: an agent compared with a bot move by move."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import agreement  # noqa: E402  (benchmarks/agreement.py)


def test_the_bot_agrees_with_itself_on_every_decision():
    figures = agreement.measure("greedy", "greedy", games=6, seed=3, players=2)
    assert set(figures["agreement"]) >= {"DRAW", "WILD", "SWAP"}
    assert all(share == 1.0 for share in figures["agreement"].values())
    assert figures["misses"] == [] and 0.0 <= figures["win_rate"] <= 1.0


def test_random_moves_disagree_and_the_misses_name_them(capsys):
    figures = agreement.measure("random", "greedy", games=6, seed=3, players=3)
    assert figures["agreement"]["DRAW"] < 0.9
    (kind, wanted, played, _top), count = figures["misses"][0]
    assert kind in {"DRAW", "WILD", "SWAP"} and wanted != played and count >= 1
    assert agreement.main(["--agent", "random", "--games", "2"]) == 0
    assert "DRAW: agrees with greedy on" in capsys.readouterr().out


def test_a_bad_agent_is_refused_in_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        agreement.main(["--agent", "nosuchbot", "--games", "2"])
    assert stop.value.code == 2
    assert "nosuchbot" in capsys.readouterr().err
