"""TorchRL glue (extra ``torchrl``): Trash as TorchRL environments, with the action masks.

Two ways in, both one line:

- :func:`make_vec_env`: one learner seat against bots, ``num_envs`` games batched by
  :class:`trash_env.vector.TrashVectorEnv` (the numba engine, extra ``vector``) in TorchRL's
  ``GymWrapper``: batch size ``[num_envs]``, keys ``observation``, ``action_mask`` (the
  learner's legal actions), ``reward``, ``done``/``terminated``/``truncated``. Fast (the
  opponents play inside the step, in compiled loops); ``examples/torchrl_ppo.py`` trains on it.
  Why a function: ``GymWrapper`` takes a Gymnasium vector env's auto-reset mode from its
  ``autoreset_mode`` attribute (``SAME_STEP`` here: TorchRL's ``VecGymEnvTransform`` then puts
  each finished game's true last observation in ``next`` and the new game's at the reset), and
  the masks come from ``infos["action_mask"]``; ``ActionMask`` keeps the action spec's mask up
  to date, so ``env.rand_step()`` and random exploration stay legal too.
- :func:`make_env`: the AEC env (every seat) in TorchRL's ``PettingZooWrapper`` with
  ``use_mask=True`` (each seat's ``action_mask`` and whether the seat acts now, ``mask``) and
  ``categorical_actions=True`` (integer actions); for multi-agent work (self-play), but slow:
  about 200 frames/s.

::

    from trash_env.integrations.torchrl import make_env, make_vec_env
    env = make_vec_env(64, opponents=["greedy"], observation="pairs", seed=0)
    env = make_env(num_players=2, seed=0)   # groups "player_0", "player_1"
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import trash_env
from trash_env.integrations import require

require("torchrl", "torchrl")

from torchrl.envs import ActionMask, EnvBase, GymWrapper  # noqa: E402
from torchrl.envs.libs.pettingzoo import PettingZooWrapper  # noqa: E402


def make_env(seed: int | None = None, **options: Any) -> PettingZooWrapper:
    """``trash_env.env(**options)`` wrapped for TorchRL (one group per seat, masks on)."""
    return PettingZooWrapper(
        env=trash_env.env(**options), use_mask=True, categorical_actions=True, seed=seed
    )


def make_vec_env(
    num_envs: int,
    opponents: Sequence[Any] | str = ("greedy",),
    seed: int | None = None,
    observation: str = "pairs",
    **options: Any,
) -> EnvBase:
    """``num_envs`` batched learner-seat games (:class:`trash_env.vector.TrashVectorEnv`
    with these arguments; ``options`` are the rules and ``seat``/``round_rewards``) as a
    TorchRL env of batch size ``[num_envs]`` with ``action_mask`` (module docstring)."""
    from trash_env.vector import TrashVectorEnv

    games = TrashVectorEnv(
        num_envs, opponents=opponents, seed=seed, observation=observation, **options
    )
    # gymnasium's own vector envs carry the mode as an attribute; TorchRL reads it there
    games.autoreset_mode = games.metadata["autoreset_mode"]  # type: ignore[attr-defined]
    env = GymWrapper(games, categorical_action_encoding=True)
    return env.append_transform(ActionMask())
