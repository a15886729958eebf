"""RLlib glue: a multi-agent env creator and a ready masked RLModule spec (extra ``rllib``).

Why: RLlib's PPO fails on the AEC env as shipped (``No default encoder config for obs
space=Dict(...)``): its default encoders take a flat Box. RLlib ships the fix,
``ActionMaskingTorchRLModule``, which wants a Dict observation with the keys
``"observations"`` and ``"action_mask"`` and a float mask (it adds ``log(mask)`` to the
logits). :class:`TrashMultiAgentEnv` gives exactly that, and :func:`rl_module_spec` builds the
spec, so a user writes::

    from ray.rllib.algorithms.ppo import PPOConfig
    from trash_env.integrations import rllib as trash_rllib

    config = (
        PPOConfig()
        .environment(trash_rllib.register(), env_config={"num_players": 2})
        .multi_agent(**trash_rllib.multi_agent_kwargs())
        .rl_module(rl_module_spec=trash_rllib.rl_module_spec())
    )

The env is turn-based like RLlib's own ``PettingZooEnv``: each step returns the observation of
the agent to move only, and its reward is what that agent earned since it last moved
(``env.last()``); at the game's end every agent gets its final observation and reward (the AEC
dead steps), so each reward is credited to the agent's previous decision.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

import trash_env
from trash_env.engine import NUM_ACTIONS
from trash_env.integrations import require

require("ray.rllib", "rllib")

from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (  # noqa: E402
    ActionMaskingTorchRLModule,
)

ENV_NAME = "trash_v0"
POLICY = "shared"  # one policy for every seat: self-play with parameter sharing


class TrashMultiAgentEnv(MultiAgentEnv):
    """``trash_env.env(**config)`` as an RLlib ``MultiAgentEnv`` with masked observations.

    Observations: ``{"observations": float32 vector, "action_mask": float32 0/1 vector}``.
    ``config`` holds the env's options (every rules option, ``round_rewards``); RLlib's
    ``EnvContext`` extras (worker index, ...) are not options and are ignored."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        options = dict(config or {})
        self._aec = trash_env.env(**options)
        self.possible_agents = list(self._aec.possible_agents)
        # Every seat plays every game to its end: RLlib's checks read ``agents`` as the ids
        # that may appear in a step's dicts, which after the last step are all of them.
        self.agents = list(self.possible_agents)
        size = self._aec.observation_space(self.possible_agents[0])["observation"].shape
        space = spaces.Dict(
            {
                "observations": spaces.Box(0.0, 1.0, size, np.float32),
                "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )
        self.observation_spaces: dict[str, spaces.Space[Any]] = dict.fromkeys(
            self.possible_agents, space
        )
        self.action_spaces: dict[str, spaces.Space[Any]] = {
            a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents
        }
        self.observation_space = spaces.Dict(self.observation_spaces)
        self.action_space = spaces.Dict(self.action_spaces)
        # Actions the mask refused in this game (a metric: masked policies send none; an
        # illegal action ends the game with -1 for the offender, as in ``trash_env.env``).
        # Zeroed by reset: RLlib's env check steps a fresh env with unmasked random actions.
        self.illegal_moves = 0

    @staticmethod
    def _convert(obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {
            "observations": obs["observation"],
            "action_mask": obs["action_mask"].astype(np.float32),
        }

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._aec.reset(seed=seed)
        self.illegal_moves = 0
        agent = self._aec.agent_selection
        return {agent: self._convert(self._aec.observe(agent))}, {}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        aec = self._aec
        mover = aec.agent_selection
        if mover not in action_dict:
            raise ValueError(f"it is {mover}'s turn; got actions for {sorted(action_dict)}")
        action = action_dict[mover]
        if 0 <= action < NUM_ACTIONS and not aec.observe(mover)["action_mask"][action]:
            self.illegal_moves += 1
        aec.step(action)  # a bad action: the env's InvalidActionError names the legal range
        obs, rewards, terminateds, truncateds, infos = {}, {}, {}, {}, {}
        # The next agent to move, or (game over) every agent's dead step in turn.
        while aec.agents:
            agent = aec.agent_selection
            observation, reward, terminated, truncated, info = aec.last()
            obs[agent] = self._convert(observation)
            rewards[agent] = float(reward)
            terminateds[agent] = bool(terminated)
            truncateds[agent] = bool(truncated)
            infos[agent] = info
            if terminated or truncated:
                aec.step(None)
            else:
                break
        over = not aec.agents
        terminateds["__all__"] = over and any(terminateds.values())
        truncateds["__all__"] = over and not terminateds["__all__"]
        return obs, rewards, terminateds, truncateds, infos


def env_creator(config: dict[str, Any] | None = None) -> TrashMultiAgentEnv:
    """RLlib's env creator: ``register_env("trash_v0", env_creator)``."""
    return TrashMultiAgentEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Register :func:`env_creator` with Ray Tune under ``name`` and return the name."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared policy (self-play)."""
    return POLICY


def multi_agent_kwargs() -> dict[str, Any]:
    """The arguments of ``AlgorithmConfig.multi_agent`` for the shared masked policy."""
    return {"policies": {POLICY}, "policy_mapping_fn": policy_mapping_fn}


def rl_module_spec(hiddens: tuple[int, ...] = (128, 128)) -> MultiRLModuleSpec:
    """The masked PPO module for the shared policy (``ActionMaskingTorchRLModule``)."""
    model_config = {
        "fcnet_hiddens": list(hiddens),
        "head_fcnet_hiddens": [],
        "vf_share_layers": False,
    }
    return MultiRLModuleSpec(
        rl_module_specs={
            POLICY: RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config)
        }
    )
