"""An agent that cannot play a game is refused before it starts, at every table (the web's
own test is tests/test_web_guard.py), and agent-spec numbers are written plainly."""

from __future__ import annotations

import io
import warnings

import pytest

from agents.bots.base import check_fits, make_agent
from agents.play.game import main as play_main
from agents.policies.policy import TrainingMismatchWarning
from trash_env.rules import Rules


def test_check_fits_refuses_another_player_count_and_lets_other_rules_play(monkeypatch):
    import agents.policies.policy as policy

    monkeypatch.setattr(policy, "_WARNED", set())  # warned once per process: start afresh
    with pytest.raises(ValueError, match="trained for 3 players, but this game has 2"):
        check_fits(make_agent("pretrained_3p"), Rules(num_players=2))
    check_fits(make_agent("greedy"), Rules(num_players=6))  # bots play any rules
    pretrained = make_agent("pretrained")
    for n in range(2, 7):
        check_fits(pretrained, Rules(num_players=n))  # a shipped model for every count
        assert pretrained.num_players == n
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_fits(make_agent("pretrained_2p"), Rules(wilds="kings"))
    assert [w.category for w in caught] == [TrainingMismatchWarning]


def test_the_terminal_game_refuses_a_model_for_another_count_before_the_deal(capsys):
    out = io.StringIO()
    code = play_main(
        ["--opponents", "pretrained_3p", "--seed", "1", "--no-log"],
        stdin=io.StringIO(""),
        stdout=out,
    )
    assert code == 2
    assert "trained for 3 players" in capsys.readouterr().err
    assert "you are seat" not in out.getvalue()  # no game was dealt


@pytest.mark.parametrize(
    "spec",
    [
        "search:rollouts=+30",
        "search:rollouts=3_0",
        "search:rollouts=30.0",
        "search:rollouts=3e1",
        "search:rollouts=0x1e",
        "search:rollouts=nan",
        "search:z=nan",
        "search:z=inf",
        "search:z=1e0",
    ],
)
def test_spec_numbers_are_plain_digits(spec):
    with pytest.raises(ValueError, match="plain digits"):
        make_agent(spec)


def test_plain_spec_numbers_still_parse():
    agent = make_agent("search:rollouts= 30 ,z=1.5")
    assert (agent.rollouts, agent.z) == (30, 1.5)
    assert make_agent("search:z=.5").z == 0.5
