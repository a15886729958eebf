"""Tournaments between agents with duplicate deals: :func:`evaluate` returns a :class:`Report`.

The one import for users. The work is split by job: who plays whom, on which deal, in which
process (:mod:`agents.tournament`, whose docstring says why the tournaments are fair); the
figures and their intervals (:mod:`agents.scoring`: win rates with 95% Wilson intervals,
head-to-head, TrueSkill ratings); the report and its files (:mod:`agents.report`: table, JSON,
CSV, PNG). Every name below is importable from here, as it always was.
"""

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
