"""The training envs and the opponent pool they draw from.

The learner plays :class:`trash_env.solo.TrashSoloEnv` (one seat; the opponents act inside
``step``): on the batched path all envs are one :class:`trash_env.vector.TrashVecEnv`; on the
dummy/subprocess paths each is ``Checkpointable(ProgressShaping(Monitor(TrashSoloEnv)))``,
Monitor below the shaping so that its episode figures are the true rewards.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from agents.training.config import TrainConfig, decided


def opponent_pool(opponents: tuple[str, ...] | list[str], snapshots: list[str]) -> list[str]:
    """The specs the opponent seats draw from: every ``--opponents`` entry equally often,
    ``self`` spread over the self-play ``snapshots`` (played by sampling their policy)."""
    k = max(1, len(snapshots))
    pool: list[str] = []
    for spec in opponents:
        if spec == "self":
            pool += [f"{s}:deterministic=false" for s in snapshots]
        else:
            pool += [spec] * k
    return pool or ["random"]


class Checkpointable(gym.Wrapper):
    """A solo env whose state a checkpoint can fetch through ``VecEnv.env_method``, in
    whichever process the env lives."""

    def checkpoint_state(self) -> Any:
        """The wrapped env as plain data (agents.training.env_state)."""
        from agents.training.env_state import solo_env_state

        return solo_env_state(self.env)


def make_venv(config: TrainConfig, pool: list[str], shaping: float, saved_envs: Any = None) -> Any:
    """The vec env of a run: new ones seeded from ``config.seed``, or (``saved_envs``, from a
    checkpoint) the envs as they were, mid-episode."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from agents.training.env_state import restore_batched_env, restore_solo_env
    from agents.training.shaping import ProgressShaping
    from trash_env.solo import TrashSoloEnv

    rules, seed = config.rules, config.seed
    num_envs = decided(config.envs, "envs")
    round_rewards = decided(config.round_rewards, "round_rewards")
    if config.vec == "batched":
        from trash_env.vector import make_vec_env

        batch = make_vec_env(
            num_envs, pool, rules, seed=seed, round_rewards=round_rewards, shaping=shaping
        )
        if saved_envs is None:
            return batch
        # The checkpoint's batch, mid-episode, once checked against the new one.
        return restore_batched_env(saved_envs, config, batch)

    def new_env(rank: int) -> Any:
        env = TrashSoloEnv(opponents=pool, round_rewards=round_rewards, **rules)
        shaped = ProgressShaping(Monitor(env), shaping)
        shaped.reset(seed=seed * 1000 + rank)
        return shaped

    restored = None
    if saved_envs is not None:  # checked here, before any worker starts
        restored = [
            restore_solo_env(env, new_env(rank), rank) for rank, env in enumerate(saved_envs)
        ]

    def factory(rank: int) -> Any:
        state = restored[rank] if restored is not None else None

        def make() -> Any:
            import torch

            torch.set_num_threads(1)
            return Checkpointable(state if state is not None else new_env(rank))

        return make

    makers = [factory(rank) for rank in range(num_envs)]
    if config.vec == "subproc":
        return SubprocVecEnv(makers, start_method="spawn")
    return DummyVecEnv(makers)


def env_states(config: TrainConfig, venv: Any) -> Any:
    """The envs mid-episode, for a checkpoint: the whole batch, or one state per env."""
    from agents.training.env_state import batched_env_state

    if config.vec == "batched":
        return batched_env_state(venv)
    return venv.env_method("checkpoint_state")
