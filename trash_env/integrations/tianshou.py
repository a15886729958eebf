"""Tianshou glue (extra ``tianshou``): the env in the layouts Tianshou's policies read, each
counting illegal actions.

- :func:`make_solo_env`: :class:`trash_env.solo.TrashSoloEnv` (one learner seat, the opponents
  playing inside ``step()``) as a Gymnasium env whose observation is the dict
  ``{"obs": vector, "mask": legal actions}``. Tianshou's collector turns a dict observation
  into a ``Batch``, so a policy's network reads ``obs.obs`` and ``obs.mask``: a masked actor
  (``examples/tianshou_ppo.py``) sets the masked logits to the lowest float before its
  categorical distribution, so neither sampling nor argmax can pick an illegal action. This is
  what the example trains on (against ``greedy``)::

      from trash_env.integrations.tianshou import make_solo_env
      env = make_solo_env(opponents=["greedy"], observation="pairs")

- :func:`make_env`: the AEC env as Tianshou's own ``PettingZooEnv``, which already turns
  ``{"observation", "action_mask"}`` into the ``{"agent_id", "obs", "mask"}`` batches of its
  multi-agent algorithms (DQN's ``compute_q_value`` and the random MARL policy honour
  ``mask``). Credit there: Tianshou's multi-agent algorithms read each agent's column of the
  per-step reward vector at that agent's transitions and walk the shared buffer for n-step
  returns, so a final reward paid on an opponent's move reaches an agent only through
  ``n_step_return_horizon``; use a horizon of a few steps (a Trash turn is several decisions).

Both envs' infos carry the same keys on every step, which Tianshou's replay buffer needs (it
stacks them).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import trash_env
from trash_env.engine import NUM_ACTIONS
from trash_env.integrations import require
from trash_env.solo import TrashSoloEnv

require("tianshou", "tianshou")

from tianshou.env import PettingZooEnv  # noqa: E402


class TrashTianshouSoloEnv(gym.Env):
    """``TrashSoloEnv(**options)`` with the observation ``{"obs": vector, "mask": bool[13]}``
    (the learner's legal actions, also in ``info["action_mask"]``) and ``illegal_moves``: the
    actions the mask refused since construction (such an action ends the episode with -1, as in
    ``TrashSoloEnv``)."""

    def __init__(self, **options: Any) -> None:
        self.solo = TrashSoloEnv(**options)
        self.observation_space = spaces.Dict(
            {
                "obs": self.solo.observation_space,
                "mask": spaces.MultiBinary(NUM_ACTIONS),
            }
        )
        self.action_space = self.solo.action_space
        self.illegal_moves = 0
        self._mask = np.zeros(NUM_ACTIONS, bool)

    def _wrap(self, obs: np.ndarray, info: dict) -> dict[str, np.ndarray]:
        self._mask = np.asarray(info["action_mask"], bool)
        return {"obs": obs, "mask": self._mask}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, info = self.solo.reset(seed=seed, options=options)
        return self._wrap(obs, info), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if 0 <= action < NUM_ACTIONS and not self._mask[action]:
            self.illegal_moves += 1  # an out-of-range action gets the env's own error
        obs, reward, terminated, truncated, info = self.solo.step(action)
        return self._wrap(obs, info), reward, terminated, truncated, info


def make_solo_env(**options: Any) -> TrashTianshouSoloEnv:
    """One learner seat for Tianshou's collectors; ``options`` as for ``TrashSoloEnv``
    (``opponents``, ``observation``, ``seed``-free rules options ...)."""
    return TrashTianshouSoloEnv(**options)


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
    """The AEC env for Tianshou's multi-agent collectors; ``options`` as for
    ``trash_env.env``."""
    return TrashTianshouEnv(**options)
