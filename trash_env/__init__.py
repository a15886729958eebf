"""trash-env: the card game Trash (Garbage) as a rules engine and RL environments.

``trash_env.env(**options)`` is the wrapped PettingZoo AEC environment and
``trash_env.raw_env(**options)`` the bare one; importing the package registers
``"trash/trash-v0"`` so that ``pettingzoo.make("aec", "trash/trash-v0")`` works.
"""

# The one place the version is written: pyproject.toml reads it from here (dynamic version).
__version__ = "0.1.0"

import gymnasium  # noqa: E402 - after __version__, which setuptools reads without importing
from pettingzoo import aec_registry, register

from trash_env.engine import Decision, Event, Game
from trash_env.env import env, raw_env
from trash_env.rules import Rules

ENV_ID = "trash/trash-v0"

if ENV_ID not in aec_registry:  # re-importing (e.g. importlib.reload) must not warn
    register("aec", ENV_ID, "trash_env.env:env")

# The single-agent view (trash_env.solo): gymnasium.make("trash_env/TrashSolo-v0", **options).
SOLO_ENV_ID = "trash_env/TrashSolo-v0"
if SOLO_ENV_ID not in gymnasium.registry:
    gymnasium.register(SOLO_ENV_ID, entry_point="trash_env.solo:TrashSoloEnv")

__all__ = [
    "ENV_ID",
    "SOLO_ENV_ID",
    "Decision",
    "Event",
    "Game",
    "Rules",
    "__version__",
    "env",
    "raw_env",
]
