"""Evaluation: duplicate-deal tournaments between agents; :func:`evaluate` returns a
:class:`Report`.

The package's own namespace is the one import for users. The work is split by job: who plays
whom, on which deal, with which seeds (:mod:`agents.evaluation.tournament`, whose docstring says
why the tournaments are fair); running them and streaming the results
(:mod:`agents.evaluation.runner`); the worker processes (:mod:`agents.evaluation.pool`, or Ray
tasks: :mod:`agents.evaluation.ray_backend`); the figures and their intervals
(:mod:`agents.evaluation.scoring`: win rates with 95% Wilson intervals, head-to-head, TrueSkill
ratings); the report and its files (:mod:`agents.evaluation.report`: table, JSON, CSV, PNG); every
setting of a game at once (:mod:`agents.evaluation.sizes`); ``evaluate.py``'s command line
(:mod:`agents.evaluation.cli`).
"""

from agents.evaluation.runner import (
    BACKENDS,
    MAX_GAMES,
    MAX_SAVED_GAMES,
    MAX_WORKERS,
    SEATINGS,
    Z95,
    GameResult,
    Report,
    agent_seed,
    check_specs,
    deal_seed,
    evaluate,
    lineups,
    play_game,
    seat_orders,
    wilson_interval,
)

__all__ = [
    "BACKENDS",
    "MAX_GAMES",
    "MAX_SAVED_GAMES",
    "MAX_WORKERS",
    "SEATINGS",
    "Z95",
    "GameResult",
    "Report",
    "agent_seed",
    "check_specs",
    "deal_seed",
    "evaluate",
    "lineups",
    "play_game",
    "seat_orders",
    "wilson_interval",
]
