"""The statistics of a tournament: Wilson intervals, the per-agent, head-to-head, seat and
first-seat figures, and TrueSkill ratings, computed from the games of
:func:`agents.evaluation.evaluate` in deal order (so a seed gives the same numbers whatever the
number of workers): one game at a time (:meth:`Tally.add`), or a batch of games held as arrays
(:meth:`Tally.add_columns`, the batched engine's), which gives the same numbers to the last bit.

Counting: a spec's ``games`` counts each seat it held (a line-up with 3 copies of a spec counts 3
per game). A game with ``k`` winners gives each ``1/k`` of a win; a truncated game gives no win.
``win_rate = wins / games`` with a 95% Wilson interval (games treated as independent; duplicate
deals make results negatively correlated between seatings, so the interval is, if anything,
conservative for comparisons). ``par`` is ``1 / num_players``, the win rate of an agent among
copies of itself. Head-to-head: over every game where specs A and B both sit, every pair of
seats (A's, B's) scores 1 when A placed better, 1/2 on equal placings (and in truncated games).
The rating is TrueSkill (``trueskill`` library), one update per game in deal order, placings as
ranks; a spec holding several seats of a game is rated as separate players from its rating and
then given the mean of their updated ratings. Its ``rank`` counts the specs whose 95% rating
interval lies wholly above this one's (:func:`rating_ranks`): ratings that cannot be told apart
share a rank (``tied``), rather than being ordered by noise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from agents.evaluation.report import Report
    from agents.evaluation.tournament import GameColumns, GameResult

Z95 = 1.959963984540054


def wilson_interval(wins: float, games: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a rate ``wins / games`` (fractional wins allowed)."""
    if games <= 0:
        return (0.0, 1.0)
    p = wins / games
    denom = 1.0 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    low = 0.0 if wins <= 0 else max(0.0, centre - half)
    high = 1.0 if wins >= games else min(1.0, centre + half)
    return (low, high)


def one_seat_figures(report: Report, spec: str) -> dict:
    """``spec``'s games, wins, win rate and 95% Wilson interval over the games where it
    holds exactly one seat (with two players: all of them), against its par
    ``1 / players``: the figure every learning target is judged by (``reaches_par``: the
    interval's top reaches par)."""
    games, wins = report.single_seat[spec]
    low, high = wilson_interval(wins, games)
    par = 1.0 / report.rules.num_players
    others = [s for s in report.specs if s != spec]
    return {
        "agent": spec,
        "opponent": others[0] if len(others) == 1 else others,
        "games": games,
        "wins": wins,
        "win_rate": wins / games if games else 0.0,
        "ci95": [low, high],
        "par": par,
        "reaches_par": bool(games) and high >= par,  # at par or above it
    }


class Tally:
    """The running counts of a tournament: :meth:`add` takes each game's result in deal order
    (memory does not grow with the number of games), :meth:`fill` writes the figures into a
    :class:`agents.evaluation.report.Report`."""

    def __init__(self, specs: Sequence[str], num_players: int) -> None:
        import trueskill

        self.specs, self.n = list(specs), num_players
        self.games = 0
        self.seat_count = dict.fromkeys(self.specs, 0)
        self.wins = dict.fromkeys(self.specs, 0.0)
        self.returns = dict.fromkeys(self.specs, 0.0)
        self.placing_sum = dict.fromkeys(self.specs, 0.0)
        self.placed = dict.fromkeys(self.specs, 0)
        self.single = {spec: [0, 0.0] for spec in self.specs}  # games and wins holding one seat
        self.pair_n: dict[tuple[str, str], int] = {}
        self.pair_w: dict[tuple[str, str], float] = {}
        self.seat_games = [0] * num_players
        self.seat_wins = [0.0] * num_players
        self.first_wins = 0.0
        self.rounds = self.turns = self.truncated = 0
        self.env = trueskill.TrueSkill(draw_probability=0.05)
        self.margin = trueskill.calc_draw_margin(self.env.draw_probability, 2, self.env)
        self.ratings = {spec: self.env.create_rating() for spec in self.specs}

    def add(self, res: GameResult) -> None:
        """Count one game (the games must come in deal order: the ratings depend on it)."""
        n = self.n
        self.games += 1
        share = [0.0] * n
        for p in res.winners:
            share[p] = 1.0 / len(res.winners)
        for p, spec in enumerate(res.seats):
            self.seat_count[spec] += 1
            self.wins[spec] += share[p]
            self.returns[spec] += res.returns[p]
            self.seat_games[p] += 1
            self.seat_wins[p] += share[p]
            if res.placings is not None:
                self.placing_sum[spec] += res.placings[p]
                self.placed[spec] += 1
            if res.seats.count(spec) == 1:
                self.single[spec][0] += 1
                self.single[spec][1] += share[p]
        self.first_wins += share[res.first_player]
        for p, a in enumerate(res.seats):
            for q, b in enumerate(res.seats):
                if a == b:
                    continue
                self.pair_n[a, b] = self.pair_n.get((a, b), 0) + 1
                if res.placings is None or res.placings[p] == res.placings[q]:
                    score = 0.5
                else:
                    score = float(res.placings[p] < res.placings[q])
                self.pair_w[a, b] = self.pair_w.get((a, b), 0.0) + score
        self.rounds += res.rounds
        self.turns += res.turns
        self.truncated += res.truncated
        if res.placings is not None:
            self._rate(res.seats, res.placings)

    def add_columns(self, games: GameColumns) -> None:
        """Count many games at once, as :meth:`add` counts them one by one in row order (the
        same figures to the last bit: sums that rounding could reorder are added in that
        order; the 2-player ratings run one game at a time on floats, without the library's
        objects)."""
        m, n, specs = len(games), self.n, self.specs
        if m == 0:
            return
        where = {spec: i for i, spec in enumerate(specs)}
        who = np.array([[where[s] for s in seats] for seats in games.orders], np.int64)
        who = who[games.order].reshape(m, n)
        count = games.winners.sum(axis=1)
        share = np.where(games.winners, 1.0 / np.maximum(count, 1)[:, None], 0.0)
        placed = ~games.truncated
        self.games += m
        for i, spec in enumerate(specs):
            mine = who == i
            ranked = mine & placed[:, None]
            alone = mine & (mine.sum(axis=1) == 1)[:, None]
            self.seat_count[spec] += int(mine.sum())
            self.wins[spec] = _in_order(self.wins[spec], share[mine])
            self.returns[spec] = _in_order(self.returns[spec], games.returns[mine])
            self.placing_sum[spec] = _in_order(self.placing_sum[spec], games.placings[ranked])
            self.placed[spec] += int(ranked.sum())
            self.single[spec][0] += int(alone.sum())
            self.single[spec][1] = _in_order(self.single[spec][1], share[alone])
        for p in range(n):
            self.seat_games[p] += m
            self.seat_wins[p] = _in_order(self.seat_wins[p], share[:, p])
        self.first_wins = _in_order(self.first_wins, share[np.arange(m), games.first_player])
        size = len(specs)
        for p in range(n):
            for q in range(n):
                if p == q:
                    continue
                mine, theirs = games.placings[:, p], games.placings[:, q]
                better = (mine < theirs).astype(np.float64)
                score = np.where(games.truncated | (mine == theirs), 0.5, better)
                differ = who[:, p] != who[:, q]
                key = (who[:, p] * size + who[:, q])[differ]
                # Scores are halves: their sums are exact in any order.
                counts = np.bincount(key, minlength=size * size)
                sums = np.bincount(key, weights=score[differ], minlength=size * size)
                for k in np.flatnonzero(counts).tolist():
                    pair = (specs[k // size], specs[k % size])
                    self.pair_n[pair] = self.pair_n.get(pair, 0) + int(counts[k])
                    self.pair_w[pair] = self.pair_w.get(pair, 0.0) + float(sums[k])
        self.rounds += int(games.rounds.sum())
        self.turns += int(games.turns.sum())
        self.truncated += int(games.truncated.sum())
        rated = np.flatnonzero(placed)
        if n == 2:
            self._rate_pairs(who[rated].tolist(), games.placings[rated].tolist())
        else:
            for g in rated.tolist():
                seats = games.orders[int(games.order[g])]
                self._rate(seats, games.placings[g].tolist())

    def _rate_pairs(self, who: list[list[int]], placings: list[list[int]]) -> None:
        """:meth:`_rate` of many 2-player games in order (spec indices ``who``), on floats: each
        step rounds mu and sigma as the library's ``Rating`` stores them (precision and
        precision-adjusted mean), so the numbers are the per-game path's to the last bit."""
        env, margin, specs = self.env, self.margin, self.specs
        mus = [self.ratings[spec].mu for spec in specs]
        sigmas = [self.ratings[spec].sigma for spec in specs]
        latest: dict[int, tuple[float, float]] = {}
        for (a, b), (pa, pb) in zip(who, placings, strict=True):
            old = (mus[a], sigmas[a], mus[b], sigmas[b])
            mu1, s1, mu2, s2 = rate_two_values(env, margin, *old, pa, pb)
            mu1, s1 = _as_stored(mu1, s1)
            mu2, s2 = _as_stored(mu2, s2)
            if a == b:  # one spec in both seats: the mean of its two updates
                latest[a] = (sum((mu1, mu2)) / 2, sum((s1, s2)) / 2)
            else:
                latest[a], latest[b] = (mu1, s1), (mu2, s2)
            for i in {a, b}:
                mus[i], sigmas[i] = _as_stored(*latest[i])
        for i, (mu, sigma) in latest.items():
            self.ratings[specs[i]] = env.create_rating(mu=mu, sigma=sigma)

    def _rate(self, seats: Sequence[str], placings: Sequence[int]) -> None:
        env, ratings = self.env, self.ratings
        if len(seats) == 2:
            new = rate_two(env, self.margin, ratings[seats[0]], ratings[seats[1]], placings)
        else:
            new = env.rate([(ratings[spec],) for spec in seats], ranks=[p - 1 for p in placings])
        for spec in set(seats):
            mine = [new[p][0] for p, s in enumerate(seats) if s == spec]
            mu = sum(r.mu for r in mine) / len(mine)
            sigma = sum(r.sigma for r in mine) / len(mine)
            ratings[spec] = env.create_rating(mu=mu, sigma=sigma)

    def fill(self, report: Report) -> None:
        """Write the figures so far into ``report``'s agents, pairs, seats, first_seat and
        summary."""
        n, specs = self.n, self.specs
        total = max(1, self.games)
        report.games = self.games
        for spec in specs:
            g, w = self.seat_count[spec], self.wins[spec]
            r = self.ratings[spec]
            report.agents[spec] = {
                "games": g,
                "wins": w,
                "win_rate": w / g if g else 0.0,
                "ci95": list(wilson_interval(w, g)),
                "mean_placing": (
                    self.placing_sum[spec] / self.placed[spec] if self.placed[spec] else None
                ),
                "mean_return": self.returns[spec] / g if g else 0.0,
                "rating": {
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "conservative": r.mu - 3 * r.sigma,
                    "ci95": [r.mu - Z95 * r.sigma, r.mu + Z95 * r.sigma],
                },
            }
        for spec, (rank, tied) in rating_ranks(
            {spec: (r.mu, r.sigma) for spec, r in self.ratings.items()}
        ).items():
            report.agents[spec]["rating"].update(rank=rank, tied=tied)
            report.single_seat[spec] = (int(self.single[spec][0]), self.single[spec][1])
        for a in specs:
            for b in specs:
                if (a, b) in self.pair_n:
                    c, w = self.pair_n[a, b], self.pair_w[a, b]
                    report.pairs[f"{a} vs {b}"] = {
                        "agent": a,
                        "opponent": b,
                        "comparisons": c,
                        "wins": w,
                        "rate": w / c,
                        "ci95": list(wilson_interval(w, c)),
                    }
        report.seats = [
            {
                "seat": p,
                "games": self.seat_games[p],
                "wins": self.seat_wins[p],
                "win_rate": self.seat_wins[p] / self.seat_games[p] if self.seat_games[p] else 0.0,
                "ci95": list(wilson_interval(self.seat_wins[p], self.seat_games[p])),
            }
            for p in range(n)
        ]
        first_rate = self.first_wins / total
        report.first_seat = {
            "games": self.games,
            "wins": self.first_wins,
            "win_rate": first_rate,
            "ci95": list(wilson_interval(self.first_wins, self.games)),
            "advantage": first_rate - 1.0 / n,
        }
        report.summary = {
            "mean_rounds": self.rounds / total,
            "mean_turns": self.turns / total,
            "truncated": self.truncated,
        }


def rating_ranks(
    ratings: dict[str, tuple[float, float]], z: float = Z95
) -> dict[str, tuple[int, bool]]:
    """Each spec's rank by its rating ``(mu, sigma)``, and whether it shares it: a spec ranks
    below another only when its interval ``mu +- z sigma`` lies wholly below the other's, so
    specs whose ratings cannot be told apart share a rank (a difference of a tenth of a point
    between two ratings of sigma 0.8 means nothing)."""
    high = {spec: mu + z * sigma for spec, (mu, sigma) in ratings.items()}
    low = {spec: mu - z * sigma for spec, (mu, sigma) in ratings.items()}
    ranks = {spec: 1 + sum(low[other] > high[spec] for other in ratings) for spec in ratings}
    counts = {rank: list(ranks.values()).count(rank) for rank in ranks.values()}
    return {spec: (rank, counts[rank] > 1) for spec, rank in ranks.items()}


def rate_two(
    env: Any, draw_margin: float, first: Any, second: Any, placings: Sequence[int]
) -> list[tuple]:
    """``env.rate([(first,), (second,)], ranks)`` of a two-player game, in closed form.

    For two teams TrueSkill's factor graph is exact in one pass (one team-difference factor,
    one truncation), so the update reduces to the library's own ``v``/``w`` functions; the
    numbers agree with ``env.rate`` to rounding (tested), much faster (docs/benchmarks.md). The
    ratings are updated game by game in order, so this is the serial part of every evaluation."""
    mu1, s1, mu2, s2 = rate_two_values(
        env, draw_margin, first.mu, first.sigma, second.mu, second.sigma, *placings
    )
    return [(env.create_rating(mu1, s1),), (env.create_rating(mu2, s2),)]


def rate_two_values(
    env: Any,
    draw_margin: float,
    mu1: float,
    sigma1: float,
    mu2: float,
    sigma2: float,
    placing1: int,
    placing2: int,
) -> tuple[float, float, float, float]:
    """:func:`rate_two` on plain floats: the two players' new ``(mu, sigma)``."""
    var1 = sigma1**2 + env.tau**2
    var2 = sigma2**2 + env.tau**2
    c = math.sqrt(var1 + var2 + 2 * env.beta**2)
    margin = draw_margin / c
    if placing1 == placing2:
        diff = (mu1 - mu2) / c
        v, w = env.v_draw(diff, margin), env.w_draw(diff, margin)
        sign = 1.0
    else:  # the difference is taken winner minus loser
        sign = 1.0 if placing1 < placing2 else -1.0
        diff = sign * (mu1 - mu2) / c
        v, w = env.v_win(diff, margin), env.w_win(diff, margin)
    return (
        mu1 + sign * var1 / c * v,
        math.sqrt(var1 * (1 - var1 / c**2 * w)),
        mu2 - sign * var2 / c * v,
        math.sqrt(var2 * (1 - var2 / c**2 * w)),
    )


def _as_stored(mu: float, sigma: float) -> tuple[float, float]:
    """``(Rating(mu, sigma).mu, Rating(mu, sigma).sigma)``: the library keeps a rating as its
    precision and precision-adjusted mean, and gives mu and sigma back from them."""
    pi = sigma**-2
    tau = pi * mu
    return (pi and tau / pi), (math.sqrt(1 / pi) if pi else math.inf)


def _in_order(total: float, values: np.ndarray) -> float:
    """``total`` plus each of ``values`` in turn, left to right (as a per-game loop adds them)."""
    for value in values.tolist():
        total += value
    return total
