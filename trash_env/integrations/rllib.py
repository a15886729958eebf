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

import gymnasium as gym
import numpy as np
from gymnasium import spaces

import trash_env
from trash_env.engine import NUM_ACTIONS
from trash_env.integrations import require
from trash_env.solo import TrashSoloEnv

require("ray.rllib", "rllib")

from ray.rllib.callbacks.callbacks import RLlibCallback  # noqa: E402
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (  # noqa: E402
    ActionMaskingTorchRLModule,
)

ENV_NAME = "trash_v0"
SOLO_ENV_NAME = "trash_solo_v0"
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


class TrashSoloMaskedEnv(gym.Env):
    """:class:`trash_env.solo.TrashSoloEnv` (one learner seat, the other seats bots acting
    inside ``step()``) with the observation layout of ``ActionMaskingTorchRLModule``:
    ``{"observations": float32 vector, "action_mask": float32 0/1 vector}``.

    Why a single-agent env: against bots only the learner decides, and RLlib's single-agent
    env runner batches ``num_envs_per_env_runner`` of these in one gymnasium vector env (one
    forward pass per step for all of them), several times faster per decision than the
    multi-agent runner that plays one game at a time. ``config`` holds ``TrashSoloEnv``'s
    arguments (``opponents``, ``observation``, every rules option, ...); RLlib's
    ``EnvContext`` extras are ignored."""

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        self.solo = TrashSoloEnv(**dict(config or {}))
        self.observation_space = spaces.Dict(
            {
                "observations": self.solo.observation_space,
                "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
            }
        )
        self.action_space = self.solo.action_space
        self.illegal_moves = 0  # as TrashMultiAgentEnv's: actions the mask refused this game

    def _obs(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        return {"observations": vector, "action_mask": self.solo.action_masks().astype(np.float32)}

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        self.illegal_moves = 0
        vector, _ = self.solo.reset(seed=seed, options=options)
        return self._obs(vector), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        action = int(action)
        if 0 <= action < NUM_ACTIONS and not self.solo.action_masks()[action]:
            self.illegal_moves += 1
        vector, reward, terminated, truncated, _ = self.solo.step(action)
        return self._obs(vector), reward, terminated, truncated, {}


def env_creator(config: dict[str, Any] | None = None) -> TrashMultiAgentEnv:
    """RLlib's env creator: ``register_env("trash_v0", env_creator)``."""
    return TrashMultiAgentEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Register :func:`env_creator` with Ray Tune under ``name`` and return the name."""
    from ray.tune.registry import register_env

    register_env(name, env_creator)
    return name


def register_solo(name: str = SOLO_ENV_NAME) -> str:
    """Register :class:`TrashSoloMaskedEnv` with Ray Tune under ``name`` and return the name."""
    from ray.tune.registry import register_env

    register_env(name, TrashSoloMaskedEnv)
    return name


def policy_mapping_fn(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays the one shared policy (self-play)."""
    return POLICY


def multi_agent_kwargs() -> dict[str, Any]:
    """The arguments of ``AlgorithmConfig.multi_agent`` for the shared masked policy."""
    return {"policies": {POLICY}, "policy_mapping_fn": policy_mapping_fn}


def module_spec(hiddens: tuple[int, ...] = (128, 128)) -> RLModuleSpec:
    """The masked PPO module (``ActionMaskingTorchRLModule``: separate actor and critic MLPs
    with Tanh, one linear pi and vf head each), for one policy."""
    model_config = {
        "fcnet_hiddens": list(hiddens),
        "fcnet_activation": "tanh",
        "head_fcnet_hiddens": [],
        "vf_share_layers": False,
    }
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model_config)


def rl_module_spec(hiddens: tuple[int, ...] = (128, 128)) -> MultiRLModuleSpec:
    """The masked PPO module for the shared policy (:func:`module_spec`), multi-agent."""
    return MultiRLModuleSpec(rl_module_specs={POLICY: module_spec(hiddens)})


class CountIllegal(RLlibCallback):
    """An RLlib callback (``config.callbacks(CountIllegal)``): adds each finished game's
    illegal moves (:attr:`TrashMultiAgentEnv.illegal_moves`) and the game itself to the env
    runners' metrics, as the lifetime sums ``illegal_moves`` and ``games``."""

    def on_episode_end(
        self,
        *,
        episode: Any,
        metrics_logger: Any = None,
        env: Any = None,
        env_index: int = 0,
        **kwargs: Any,
    ) -> None:
        game = env.unwrapped.envs[env_index].unwrapped
        metrics_logger.log_value("illegal_moves", game.illegal_moves, reduce="lifetime_sum")
        metrics_logger.log_value("games", 1, reduce="lifetime_sum")


def policy_mlps(module: Any) -> tuple[Any, Any | None]:
    """The policy and value MLPs of a PPO module built by :func:`rl_module_spec`, as two
    ``torch.nn.Sequential`` copies (detached from training).

    ``ActionMaskingTorchRLModule`` (separate actor and critic encoders, ``vf_share_layers``
    False) computes its logits as ``pi(actor_encoder(obs))`` (each a stack of ``nn.Linear``
    with the catalog's Tanh between) and then adds ``log(mask)``: the returned ``actor`` gives
    the same logits before the mask, so a masked argmax over it plays as the module's greedy
    action. ``value`` is ``vf(critic_encoder(obs))``, None for an inference-only module (the
    one an env runner holds has no critic)."""
    import copy

    from torch import nn

    encoder = module.encoder
    actor = nn.Sequential(*encoder.actor_encoder.net.mlp, *module.pi.net.mlp)
    if encoder.critic_encoder is None or getattr(module, "vf", None) is None:
        return copy.deepcopy(actor), None  # an inference-only module (an env runner's)
    value = nn.Sequential(*encoder.critic_encoder.net.mlp, *module.vf.net.mlp)
    return copy.deepcopy(actor), copy.deepcopy(value)
