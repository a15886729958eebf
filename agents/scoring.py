"""The statistics of a tournament: Wilson intervals, the per-agent, head-to-head, seat and
first-seat figures, and TrueSkill ratings, computed from the games of
:func:`agents.tournament.evaluate` in deal order (so a seed gives the same numbers whatever the
number of workers).

Counting: a spec's ``games`` counts each seat it held (a line-up with 3 copies of a spec counts 3
per game). A game with ``k`` winners gives each ``1/k`` of a win; a truncated game gives no win.
``win_rate = wins / games`` with a 95% Wilson interval (games treated as independent; duplicate
deals make results negatively correlated between seatings, so the interval is, if anything,
conservative for comparisons). ``par`` is ``1 / num_players``, the win rate of an agent among
copies of itself. Head-to-head: over every game where specs A and B both sit, every pair of
seats (A's, B's) scores 1 when A placed better, 1/2 on equal placings (and in truncated games).
The rating is TrueSkill (``trueskill`` library), one update per game in deal order, placings as
ranks; a spec holding several seats of a game is rated as separate players from its rating and
then given the mean of their updated ratings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.report import Report

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


def summarise(report: Report) -> None:
    """Fill ``report``'s agents, pairs, seats, first_seat and summary from its results."""
    n = report.rules.num_players
    specs = report.specs
    games = dict.fromkeys(specs, 0)
    wins = dict.fromkeys(specs, 0.0)
    returns = dict.fromkeys(specs, 0.0)
    placing_sum = dict.fromkeys(specs, 0.0)
    placed = dict.fromkeys(specs, 0)
    pair_n: dict[tuple[str, str], int] = {}
    pair_w: dict[tuple[str, str], float] = {}
    seat_games = [0] * n
    seat_wins = [0.0] * n
    first_wins = 0.0
    rounds = turns = truncated = 0
    for res in report.results:
        k = len(res.winners)
        share = [0.0] * n
        for p in res.winners:
            share[p] = 1.0 / k
        for p, spec in enumerate(res.seats):
            games[spec] += 1
            wins[spec] += share[p]
            returns[spec] += res.returns[p]
            seat_games[p] += 1
            seat_wins[p] += share[p]
            if res.placings is not None:
                placing_sum[spec] += res.placings[p]
                placed[spec] += 1
        first_wins += share[res.first_player]
        for p, a in enumerate(res.seats):
            for q, b in enumerate(res.seats):
                if a == b:
                    continue
                pair_n[a, b] = pair_n.get((a, b), 0) + 1
                if res.placings is None or res.placings[p] == res.placings[q]:
                    score = 0.5
                else:
                    score = float(res.placings[p] < res.placings[q])
                pair_w[a, b] = pair_w.get((a, b), 0.0) + score
        rounds += res.rounds
        turns += res.turns
        truncated += res.truncated
    ratings = _trueskill(report)
    total = max(1, report.games)
    for spec in specs:
        g = games[spec]
        report.agents[spec] = {
            "games": g,
            "wins": wins[spec],
            "win_rate": wins[spec] / g if g else 0.0,
            "ci95": list(wilson_interval(wins[spec], g)),
            "mean_placing": placing_sum[spec] / placed[spec] if placed[spec] else None,
            "mean_return": returns[spec] / g if g else 0.0,
            "rating": ratings[spec],
        }
    for a in specs:
        for b in specs:
            if (a, b) in pair_n:
                c, w = pair_n[a, b], pair_w[a, b]
                report.pairs[f"{a} vs {b}"] = {
                    "agent": a, "opponent": b, "comparisons": c, "wins": w, "rate": w / c,
                    "ci95": list(wilson_interval(w, c)),
                }
    report.seats = [
        {"seat": p, "games": seat_games[p], "wins": seat_wins[p],
         "win_rate": seat_wins[p] / seat_games[p] if seat_games[p] else 0.0,
         "ci95": list(wilson_interval(seat_wins[p], seat_games[p]))}
        for p in range(n)
    ]
    first_rate = first_wins / total
    report.first_seat = {
        "games": report.games, "wins": first_wins, "win_rate": first_rate,
        "ci95": list(wilson_interval(first_wins, report.games)),
        "advantage": first_rate - 1.0 / n,
    }
    report.summary = {
        "mean_rounds": rounds / total,
        "mean_turns": turns / total,
        "truncated": truncated,
    }


def _trueskill(report: Report) -> dict[str, dict]:
    import trueskill

    env = trueskill.TrueSkill(draw_probability=0.05)
    margin = trueskill.calc_draw_margin(env.draw_probability, 2, env)  # of a 1-vs-1 game
    ratings = {spec: env.create_rating() for spec in report.specs}
    for res in report.results:
        if res.placings is None:
            continue
        if len(res.seats) == 2:
            first, second = (ratings[spec] for spec in res.seats)
            new = _rate_two(env, margin, first, second, res.placings)
        else:
            groups = [(ratings[spec],) for spec in res.seats]
            new = env.rate(groups, ranks=[p - 1 for p in res.placings])
        for spec in set(res.seats):
            mine = [new[p][0] for p, s in enumerate(res.seats) if s == spec]
            mu = sum(r.mu for r in mine) / len(mine)
            sigma = sum(r.sigma for r in mine) / len(mine)
            ratings[spec] = env.create_rating(mu=mu, sigma=sigma)
    return {
        spec: {"mu": r.mu, "sigma": r.sigma, "conservative": r.mu - 3 * r.sigma}
        for spec, r in ratings.items()
    }


def _rate_two(
    env: Any, draw_margin: float, first: Any, second: Any, placings: Sequence[int]
) -> list[tuple]:
    """``env.rate([(first,), (second,)], ranks)`` of a two-player game, in closed form.

    For two teams TrueSkill's factor graph is exact in one pass (one team-difference factor,
    one truncation), so the update reduces to the library's own ``v``/``w`` functions; the
    numbers agree with ``env.rate`` to rounding (tested), much faster (docs/benchmarks.md). The
    ratings are updated game by game in order, so this is the serial part of every evaluation."""
    var1 = first.sigma**2 + env.tau**2
    var2 = second.sigma**2 + env.tau**2
    c = math.sqrt(var1 + var2 + 2 * env.beta**2)
    margin = draw_margin / c
    if placings[0] == placings[1]:
        diff = (first.mu - second.mu) / c
        v, w = env.v_draw(diff, margin), env.w_draw(diff, margin)
        sign = 1.0
    else:  # the difference is taken winner minus loser
        sign = 1.0 if placings[0] < placings[1] else -1.0
        diff = sign * (first.mu - second.mu) / c
        v, w = env.v_win(diff, margin), env.w_win(diff, margin)
    rate = env.create_rating
    return [
        (rate(first.mu + sign * var1 / c * v, math.sqrt(var1 * (1 - var1 / c**2 * w))),),
        (rate(second.mu - sign * var2 / c * v, math.sqrt(var2 * (1 - var2 / c**2 * w))),),
    ]


_summarise = summarise  # the name it had in agents.evaluation
