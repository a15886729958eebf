"""trash-env: the card game Trash (Garbage) as a rules engine and RL environments."""

from trash_env.engine import Decision, Event, Game
from trash_env.rules import Rules

__all__ = ["Decision", "Event", "Game", "Rules"]
