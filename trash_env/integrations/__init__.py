"""Glue between Trash and the RL libraries researchers use (docs/integrations.md).

Each library's glue lives in its own submodule and imports that library only when used, so
``import trash_env.integrations`` costs nothing and needs no extra:

- :mod:`trash_env.integrations.transitions`: per-agent transitions out of AEC play, for
  hand-written loops (CleanRL style, AgileRL); needs nothing beyond the core install.
- :mod:`trash_env.integrations.rllib`: an RLlib env creator and a masked RLModule spec
  (extra ``rllib``).
- :mod:`trash_env.integrations.tianshou`: Tianshou's PettingZoo view of the env (extra
  ``tianshou``).
- :mod:`trash_env.integrations.torchrl`: TorchRL's PettingZoo wrapper of the env (extra
  ``torchrl``).

Using one without its library raises ``ModuleNotFoundError`` naming the extra to install.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from trash_env.integrations.transitions import Transition, TransitionBuilder, play_game

__all__ = ["Transition", "TransitionBuilder", "play_game", "require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or fail with the one line that fixes it: the extra to install.

    Why: a bare ``No module named 'ray'`` deep inside an example does not say which versions
    this project was tested with; the extras in ``pyproject.toml`` do."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"{module} is not installed: this part of trash_env needs the {extra!r} extra; "
            f'install it with: pip install "trash-env[{extra}]"',
            name=error.name,
        ) from error
