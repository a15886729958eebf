"""Exact policy evaluation (trash_env/exact/analysis.py) against Monte-Carlo play in the real
engine, and whole games composed from rounds."""

from __future__ import annotations

import numpy as np
import pytest
from test_exact_model import round_game

from agents.bots.base import RandomAgent
from agents.bots.heuristics import CountingAgent, GreedyAgent
from trash_env.exact.analysis import (
    game_win_probability,
    greedy_gap,
    round_report,
    solved,
    win_rate,
)
from trash_env.exact.model import from_game
from trash_env.exact.tables import tables_for
from trash_env.rules import Rules
from trash_env.view import PublicView

SIZES = (1, 2)


TABLES = tables_for(Rules(), 2)


def seat_policy(name: str, seed: int):
    tables = TABLES
    bots = {"greedy": GreedyAgent(), "random": RandomAgent(seed), "counting": CountingAgent()}

    def act(game):
        if name == "optimal":
            return tables.lookup(SIZES, from_game(game, SIZES))[1]
        mask = np.zeros(13, dtype=bool)
        mask[game.legal_actions()] = True
        return bots[name].act(None, mask, PublicView(game, game.current))

    return act


def engine_win_rate(policy: str, against: str, deals: int) -> tuple[float, float]:
    """``policy``'s round win rate in the engine over the four seatings, with its standard
    error."""
    wins = []
    players = [seat_policy(policy, 1), seat_policy(against, 2)]
    for seed in range(deals):
        mine, first = seed % 2, (seed // 2) % 2
        acts = players[:]
        if mine == 1:
            acts.reverse()
        game = round_game(SIZES, Rules(episode="round"), seed, first)
        while not game.done:
            game.step(acts[game.current](game))
        wins.append(game.round_results[-1] == (mine,))
    rate = float(np.mean(wins))
    return rate, float(np.std(wins, ddof=1) / np.sqrt(deals))


@pytest.mark.parametrize(
    "policy, against",
    [("optimal", "greedy"), ("greedy", "random"), ("optimal", "random"), ("counting", "random")],
)
def test_exact_win_rates_agree_with_engine_play_within_3_standard_errors(policy, against):
    counting = "counting" in (policy, against)  # evaluated on keys with the pile's top
    exact = win_rate(solved(SIZES, Rules(), counting), policy, against)
    rate, error = engine_win_rate(policy, against, 4000)
    assert abs(rate - exact) < 3 * error, (rate, exact, error)


def test_the_report_of_a_small_round():
    report = round_report((1, 1))
    assert report["win_rates"]["optimal vs optimal"] == pytest.approx(0.5, abs=1e-12)
    assert report["win_rates"]["optimal vs random"] > 0.6
    assert report["greedy_gap"]["not_optimal"] == 0
    assert report["end_probability_optimal"] == pytest.approx((1.0, 1.0), abs=1e-12)
    p0_first, p0_second = report["optimal_seat0_wins"]
    assert p0_first > 0.5 > p0_second and p0_first + p0_second == pytest.approx(1.0, abs=1e-12)


def test_greedy_is_optimal_at_one_and_two_slots_but_for_a_few_states():
    gap = greedy_gap(solved(SIZES, Rules()))
    assert 0 < gap["not_optimal"] <= 5 and gap["share"] < 1e-3


def test_whole_games_compose_rounds():
    # A coin-flip round: the game from (2, 2) is a race to two round wins, first player moot.
    coin = {(a, b, f): 0.5 for a in range(1, 3) for b in range(1, 3) for f in (0, 1)}
    assert game_win_probability(coin, (2, 2), 0) == pytest.approx(0.5)
    assert game_win_probability(coin, (1, 2), 1) == pytest.approx(0.75)
    # Seat 0 always wins its rounds: it wins the game.
    sure = dict.fromkeys(coin, 1.0)
    assert game_win_probability(sure, (2, 2), 1) == 1.0


def test_the_check_command_holds_a_report_to_engine_play(tmp_path, capsys):
    from trash_env.exact.__main__ import main

    report = tmp_path / "report.json"
    assert main(["report", "--max-size", "1", "--counting", "--json", str(report)]) == 0
    capsys.readouterr()
    assert main(["check", "--report", str(report), "--sizes", "1", "1", "--deals", "400"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("counting vs random: exact 0.") for line in lines)
    assert len(lines) == 6  # every matchup but X vs X, counting included
    assert main(["check", "--report", str(report), "--sizes", "1", "2"]) == 2
    assert "no round (1, 2)" in capsys.readouterr().err
    report.write_text("{not json")
    assert main(["check", "--report", str(report), "--sizes", "1", "1"]) == 2
    assert "is not a report" in capsys.readouterr().err


def test_the_engine_check_plays_unequal_layouts(tmp_path, capsys):
    """The engine starts a round at (1, 2), as a game arrives there after rounds won: the
    check holds every matchup of the report's round to engine play within 3 standard errors,
    either way round."""
    from trash_env.exact.__main__ import main

    report = tmp_path / "report.json"
    assert main(["report", "--max-size", "2", "--json", str(report)]) == 0
    capsys.readouterr()
    for sizes in (["1", "2"], ["2", "1"]):
        assert main(["check", "--report", str(report), "--sizes", *sizes, "--deals", "600"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 3 and all(line.endswith(" SE)") for line in lines)
