"""The batched evaluation's array paths against the per-game ones they replace: the seeds
(:func:`agents.evaluation.tournament.spawned_states` against numpy's SeedSequence) and the
statistics (:meth:`Tally.add_columns` against :meth:`Tally.add`, every figure to the last bit)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.evaluation.report import Report
from agents.evaluation.scoring import Tally
from agents.evaluation.tournament import (
    GameColumns,
    agent_seed,
    agent_seeds,
    deal_seed,
    deal_seeds,
    lineups,
    seat_orders,
    spawned_states,
)
from trash_env.rules import Rules


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1, 2**32, 2**63 + 5, 2**64 - 1, 2**90 + 3])
def test_spawned_states_are_seedsequences(seed: int) -> None:
    rng = np.random.default_rng(seed % 1000)
    keys = rng.integers(0, 2**32, size=(40, 5))
    keys[:10] = rng.integers(0, 4, size=(10, 5))  # small keys, zeros among them
    for words in (1, 2, 3):
        got = spawned_states(seed, keys, words)
        for row, state in zip(keys, got, strict=True):
            sequence = np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in row))
            assert state.tolist() == sequence.generate_state(words, np.uint64).tolist()
    wide = np.array([[2**40, 1], [3, 2**33]])  # keys of several words: one at a time
    assert spawned_states(seed, wide, 2).tolist() == [
        np.random.SeedSequence(seed, spawn_key=(2**40, 1)).generate_state(2, np.uint64).tolist(),
        np.random.SeedSequence(seed, spawn_key=(3, 2**33)).generate_state(2, np.uint64).tolist(),
    ]


def test_agent_and_deal_seeds_match_the_one_at_a_time_functions() -> None:
    rng = np.random.default_rng(1)
    deal, lineup, seating, seat = (rng.integers(0, high, 200) for high in (10**7, 6, 6, 6))
    got = agent_seeds(11, deal, lineup, seating, seat)
    rows = zip(deal, lineup, seating, seat, strict=True)
    assert got.tolist() == [agent_seed(11, *map(int, row)) for row in rows]
    for players in (2, 3, 6):
        seeds, firsts = deal_seeds(11, deal, players)
        expected = [deal_seed(11, int(d), players) for d in deal]
        assert seeds.tolist() == [s for s, _ in expected]
        assert firsts.tolist() == [f for _, f in expected]


def _random_columns(specs: list[str], players: int, games: int, seed: int) -> GameColumns:
    """Games with every kind of result: several winners, ties, truncations, copies of a
    spec in one game."""
    rng = np.random.default_rng(seed)
    orders = [order for up in lineups(specs, players) for order in seat_orders(up)]
    order = rng.integers(0, len(orders), games)
    winners = rng.random((games, players)) < 0.3
    truncated = rng.random(games) < 0.1
    winners[truncated] = False
    placings = rng.integers(1, players + 1, (games, players))
    placings[truncated] = -1
    returns = np.round(rng.normal(size=(games, players)), 3) / 3  # sums that rounding orders
    return GameColumns(
        deal=np.arange(games) // len(orders),
        lineup=np.zeros(games, np.int64),
        seating=np.zeros(games, np.int64),
        orders=orders,
        order=order,
        first_player=rng.integers(0, players, games),
        winners=winners,
        placings=placings,
        returns=returns,
        rounds=rng.integers(1, 9, games),
        turns=rng.integers(1, 300, games),
        truncated=truncated,
    )


@pytest.mark.parametrize(
    ("specs", "players"),
    [(["a", "b"], 2), (["a"], 2), (["a", "b", "c"], 2), (["a", "b"], 3), (["a", "b", "c"], 6)],
)
def test_add_columns_gives_the_per_game_figures_to_the_last_bit(specs, players) -> None:  # type: ignore[no-untyped-def]
    rules = Rules(num_players=players)
    per_game, columns = Tally(specs, players), Tally(specs, players)
    parts = [
        _random_columns(specs, players, size, seed) for seed, size in enumerate((300, 1, 0, 250))
    ]
    for part in parts:
        for result in part.results():
            per_game.add(result)
        columns.add_columns(part)
    reports = []
    for tally in (per_game, columns):
        report = Report(specs=specs, rules=rules, seed=0, seatings="rotations", lineups=[], deals=1)
        tally.fill(report)
        reports.append(report.to_json())
    assert reports[0] == reports[1]  # floats compared exactly: mu, sigma, wins, returns, ...
    assert {s: (r.mu, r.sigma) for s, r in columns.ratings.items()} == {
        s: (r.mu, r.sigma) for s, r in per_game.ratings.items()
    }
    assert per_game.ratings[specs[0]].sigma < 25 / 3  # the ratings did move


def test_game_columns_results_are_game_results() -> None:
    part = _random_columns(["a", "b"], 3, 50, 4)
    results = part.results()
    assert len(results) == len(part) == 50
    for g, result in enumerate(results):
        assert result.seats == part.orders[part.order[g]]
        assert result.winners == tuple(np.flatnonzero(part.winners[g]).tolist())
        assert (result.placings is None) == bool(part.truncated[g])
        assert isinstance(result.rounds, int) and isinstance(result.truncated, bool)
