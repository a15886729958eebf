"""TorchRL glue (extra ``torchrl``): the AEC env in TorchRL's ``PettingZooWrapper`` with masks.

Why a function at all: the wrapper needs ``use_mask=True`` for an AEC env (it then carries each
seat's ``action_mask`` and whether the seat acts now, ``mask``, and keeps the action spec's mask
up to date) and ``categorical_actions=True`` for integer actions; this is that one line::

    from trash_env.integrations.torchrl import make_env
    env = make_env(num_players=2, seed=0)   # groups "player_0", "player_1"
"""

from __future__ import annotations

from typing import Any

import trash_env
from trash_env.integrations import require

require("torchrl", "torchrl")

from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402


def make_env(seed: int | None = None, **options: Any) -> PettingZooWrapper:
    """``trash_env.env(**options)`` wrapped for TorchRL (one group per seat, masks on)."""
    return PettingZooWrapper(
        env=trash_env.env(**options), use_mask=True, categorical_actions=True, seed=seed
    )
