"""Agents that play Trash: heuristic and search bots, trained policies, a human seat.

Every agent is made from a spec string, ``name`` or ``name:key=value,...`` (or the path of a
trained model's ``.safetensors`` file), by :func:`agents.make_agent`. Importing this package
registers every built-in bot with :mod:`trash_env.agent` (an installed trash-env also finds
them through its ``trash_env.agents`` entry points, without this import).
"""

from agents import heuristics, human, search  # noqa: F401  (they register their bots)
from agents.base import Agent, RandomAgent, make_agent, parse_spec, register_agent

__all__ = ["Agent", "RandomAgent", "make_agent", "parse_spec", "register_agent"]
