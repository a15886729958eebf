"""Agents that play Trash, in sub-packages by job: ``bots`` (the heuristic and search bots and
the registry), ``policies`` (trained policies and model files), ``evaluation`` (duplicate-deal
tournaments and ``evaluate.py``), ``play`` (the terminal table, game logs and replays),
``training`` (``train.py`` and the pipelines' harness) and ``web`` (the table in a browser).

Every agent is made from a spec string, ``name`` or ``name:key=value,...`` (or the path of a
trained model's ``.safetensors`` file), by :func:`agents.make_agent`. Importing this package
registers every built-in bot with :mod:`trash_env.agent` (an installed trash-env also finds
them through its ``trash_env.agents`` entry points, without this import).
"""

from agents.bots import heuristics, search  # noqa: F401  (they register their bots)
from agents.bots.base import Agent, RandomAgent, make_agent, parse_spec, register_agent
from agents.play import human  # noqa: F401  (registers the human seat)

__all__ = ["Agent", "RandomAgent", "make_agent", "parse_spec", "register_agent"]
