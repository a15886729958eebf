"""Tianshou glue (extra ``tianshou``): the env as Tianshou's ``PettingZooEnv``, counting
illegal actions.

Why so little: Tianshou's own ``PettingZooEnv`` already turns the AEC env's
``{"observation", "action_mask"}`` into the ``{"agent_id", "obs", "mask"}`` batches its
masked policies read (DQN's ``compute_q_value`` and the random MARL policy honour ``mask``),
and the env's infos carry the same keys on every step, which its replay buffer needs. What is
added is a counter of illegal actions, so an example can show that masks were respected::

    from trash_env.integrations.tianshou import make_env
    env = make_env(num_players=2)          # a tianshou.env.PettingZooEnv

Credit: Tianshou's multi-agent algorithms read each agent's column of the per-step reward
vector at that agent's transitions and walk the shared buffer for n-step returns, so a final
reward paid on an opponent's move reaches an agent only through ``n_step_return_horizon``;
use a horizon of a few steps (a Trash turn is several decisions).
"""

from __future__ import annotations

from typing import Any

import trash_env
from trash_env.engine import NUM_ACTIONS
from trash_env.integrations import require

require("tianshou", "tianshou")

from tianshou.env import PettingZooEnv  # noqa: E402


class TrashTianshouEnv(PettingZooEnv):
    """``tianshou.env.PettingZooEnv(trash_env.env(**options))`` with ``illegal_moves``: the
    actions its mask refused since construction (an illegal action ends the game with -1 for
    the offender, as in ``trash_env.env``)."""

    def __init__(self, **options: Any) -> None:
        self.illegal_moves = 0
        super().__init__(trash_env.env(**options))

    def step(self, action: Any) -> tuple[dict, list[int], bool, bool, dict]:
        agent = self.env.agent_selection
        live = not (self.env.terminations[agent] or self.env.truncations[agent])
        if live and 0 <= action < NUM_ACTIONS:  # else the env's own error names the range
            if not self.env.observe(agent)["action_mask"][action]:
                self.illegal_moves += 1
        return super().step(action)


def make_env(**options: Any) -> TrashTianshouEnv:
    """The Trash env for Tianshou's collectors; ``options`` as for ``trash_env.env``."""
    return TrashTianshouEnv(**options)
