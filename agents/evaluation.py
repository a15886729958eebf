"""Tournaments between agents with duplicate deals: :func:`evaluate` returns a :class:`Report`.

Fair by construction:

- **Line-ups.** With as many agent specs as seats, the one line-up is the list itself. With fewer
  specs than seats, every multiset of specs that fills the seats with each spec at least once
  (2 specs, 4 seats: 3+1, 2+2 and 1+3 copies). With more specs than seats, every combination
  of ``num_players`` distinct specs from the list. A line-up is seated in list order (copies
  side by side).
- **Seatings.** Every line-up is played in every rotation of its seats (``seatings="rotations"``,
  each spec sits at each seat equally often) or in every distinct seat permutation
  (``seatings="permutations"``, also every turn order; n! orders).
- **Duplicate deals.** Deal ``d`` has one seed, derived from the master seed and ``d`` only; every
  game of every line-up and seating of deal ``d`` starts from a Game with that seed and the same
  first seat, so the same shuffled deck is dealt to every seat order and the luck of the deal
  cancels. Later rounds are shuffled by each game's own generator, which is the same too; the
  deals stay identical as long as play does, and part once two games differ (reshuffles are
  drawn from the same generator, but the piles being shuffled differ). Agents' seeds derive
  from the master seed, the deal, the line-up, the seating and the seat.
- **Workers.** ``workers`` processes play whole deals; results are gathered in deal order and
  every figure is computed in the main process in that order, so a seed gives the same numbers
  whatever ``workers`` is. Workers are spawned, so they re-import the calling script: a script
  must call :func:`evaluate` under ``if __name__ == "__main__":``. A worker that dies (that
  missing guard, a crash, ``os._exit``) ends the evaluation with a ``RuntimeError`` saying so,
  instead of the endless respawning of a ``multiprocessing.Pool``.

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

# The evaluation is split by job: scheduling and workers (agents.tournament), statistics
# (agents.scoring), the report and its files (agents.report). This module keeps every name
# importable from where it always was.
from agents.report import Report
from agents.scoring import Z95, _rate_two, _summarise, _trueskill, summarise, wilson_interval
from agents.tournament import (
    _WORKER,
    BACKENDS,
    MAX_GAMES,
    MAX_WORKERS,
    SEATINGS,
    GameResult,
    _init_worker,
    _play_deals,
    _Table,
    agent_seed,
    check_specs,
    deal_seed,
    evaluate,
    lineups,
    play_game,
    seat_orders,
)

__all__ = [
    "BACKENDS", "MAX_GAMES", "MAX_WORKERS", "SEATINGS", "Z95", "GameResult", "Report",
    "agent_seed", "check_specs", "deal_seed", "evaluate", "lineups", "play_game",
    "seat_orders", "summarise", "wilson_interval",
    "_WORKER", "_Table", "_init_worker", "_play_deals", "_rate_two", "_summarise", "_trueskill",
]
