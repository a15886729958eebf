"""Trained policies as agents: a NumPy forward pass over a model file's network.

The model file (tensors and JSON only, checked before use) is read by
:mod:`agents.policies.model_file`.
Why a NumPy forward pass: agents act one observation at a time (opponents inside the solo env,
evaluation), where torch's per-call overhead outweighs the arithmetic of a small MLP
(docs/agents.md has the figure). Loading needs neither torch nor stable-baselines3. The actor
is always given the action mask (illegal logits are set to -inf) and picks the argmax by
default.

A :class:`PolicyAgent` checks each game it is given against what its model was trained for
(:meth:`PolicyAgent.check_rules`, called on its first decision of a new rules configuration,
and by the batched envs when they seat it): another player count is refused with a
``ValueError`` naming both; other rules, or layout sizes or an episode kind it was not trained
on, give one :class:`TrainingMismatchWarning` per model and configuration, naming what it was
trained for.

``pretrained`` is the shipped model for the game's player count (``pretrained_2p``,
``pretrained_3p``, ... in ``agents/policies/models/``), picked when the agent meets its first game
(2 players until then); ``pretrained_3p`` names one explicitly.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from agents.policies.model_file import (
    MODEL_SUFFIX,
    describe_training,
    load_model,
    training_mismatch,
    zip_refusal,
)
from trash_env.agent import Agent
from trash_env.files import safe_text
from trash_env.observation import players_of_observation
from trash_env.rules import Rules
from trash_env.sampling import masked_choice
from trash_env.view import PublicView

MODELS_DIR = Path(__file__).resolve().parent / "models"
PRETRAINED = MODELS_DIR / "pretrained_2p.safetensors"  # the 2-player one (pretrained_path(n))
PRETRAINED_NAME = re.compile(r"pretrained_([0-9])p")


def pretrained_path(num_players: int) -> Path:
    """Where the shipped model for ``num_players`` players lives (it may be absent)."""
    return MODELS_DIR / f"pretrained_{num_players}p{MODEL_SUFFIX}"


def pretrained_counts() -> list[int]:
    """The player counts a shipped pretrained model exists for."""
    return [n for n in range(2, 7) if pretrained_path(n).is_file()]


def _pretrained_for(num_players: int) -> Path:
    path = pretrained_path(num_players)
    if not path.is_file():
        counts = pretrained_counts()
        shown = ", ".join(f"{n} (pretrained_{n}p)" for n in counts) or "none"
        raise ValueError(
            f"no pretrained model for {num_players} players in this installation; "
            f"pretrained models exist for: {shown}"
        )
    return path


class TrainingMismatchWarning(UserWarning):
    """A model plays a game unlike the ones it was trained on (rules, layout sizes, episode
    kind): it is not refused, but its strength there is unmeasured."""


_WARNED: set[tuple[str, Rules]] = set()


class PolicyAgent(Agent):
    """A trained policy. ``deterministic`` picks the most probable legal action; otherwise the
    action is sampled from the masked distribution with the agent's own generator."""

    name = "policy"

    def __init__(
        self,
        layers: list[tuple[str, Any]],
        sidecar: dict[str, Any],
        seed: int | None = None,
        deterministic: bool = True,
        path: str = "",
    ) -> None:
        super().__init__(seed)
        self.deterministic = deterministic
        self._use(layers, sidecar, path)
        self.name = f"policy:{safe_text(Path(path).name)}" if path else "policy"

    def _use(self, layers: list[tuple[str, Any]], sidecar: dict[str, Any], path: str) -> None:
        """Play the network ``layers`` that ``sidecar`` describes (from ``path``)."""
        self.layers = layers
        self.sidecar = sidecar
        self.path = path
        self.num_players = int(sidecar["num_players"])
        self.input_size = int(sidecar["observation_size"])
        self._checked: Rules | None = None  # the last rules check_rules accepted

    def check_rules(self, rules: Rules) -> None:
        """Check a game's rules against what the model was trained for: another player
        count raises ``ValueError`` naming both; other rules, layout sizes or episode kind
        warn (:class:`TrainingMismatchWarning`) once per model and rules configuration."""
        if rules is self._checked or rules == self._checked:
            return
        if rules.num_players != self.num_players:
            raise ValueError(
                f"{self.name} was trained for {self.num_players} players, but this game has "
                f"{rules.num_players} players: play it at {self.num_players} players, or use "
                "a model trained for this count (pretrained picks the shipped one)"
            )
        problems = training_mismatch(self.sidecar, rules)
        key = (self.path or self.name, rules)
        if problems and key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(
                f"{self.name} was trained for {describe_training(self.sidecar)}; this game "
                f"differs: {'; '.join(problems)}. It plays, but its strength here was not "
                "measured (train.py trains for any rules, --episode game covers every layout "
                "size)",
                TrainingMismatchWarning,
                stacklevel=3,
            )
        self._checked = rules

    def logits(self, observation: np.ndarray | None) -> np.ndarray:
        """The actor's logits over the 13 actions for one observation (before masking)."""
        shape = () if observation is None else np.shape(observation)  # np.shape(None) == ()
        if observation is None or shape != (self.input_size,):
            raise ValueError(
                f"{self.name} was trained for {self.num_players} players (observation size "
                f"{self.input_size}), got an observation of shape {shape}: "
                "play it at the table size it was trained for"
            )
        return self.forward(np.asarray(observation).astype(np.float32, copy=False))

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The network's action logits (float64) for one observation or a batch of them (the
        leading axis), unchecked: the batched envs call it on many games at once."""
        for kind, params in self.layers:
            if kind == "linear":
                x = x @ params[0] + params[1]
            elif kind == "features":
                x = params(x)
            elif kind == "tanh":
                x = np.tanh(x)
            else:
                x = np.maximum(x, 0.0)
        return x.astype(np.float64)

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: PublicView) -> int:
        if view is not None:
            self.check_rules(view.rules)
        logits = self.logits(observation)
        legal = np.asarray(action_mask, bool)
        if not legal.any():
            raise ValueError(f"{self.name}: asked to act with no legal action")
        return int(masked_choice(logits, legal, self.rng, self.deterministic))


def _as_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"policy option {name} must be true or false, got {safe_text(repr(value))}")


class PretrainedAgent(PolicyAgent):
    """``pretrained``: the shipped model for the player count of the game it is given (the
    2-player one until then); a count without a shipped model is refused, naming those
    that exist."""

    def __init__(
        self, num_players: int = 2, seed: int | None = None, deterministic: bool = True
    ) -> None:
        path = _pretrained_for(num_players)
        layers, sidecar = load_model(path)
        super().__init__(layers, sidecar, seed=seed, deterministic=deterministic, path=str(path))
        self.name = "pretrained"

    def use_players(self, num_players: int) -> None:
        """Play the shipped model for ``num_players`` from now on (``ValueError`` naming the
        counts that have one)."""
        path = _pretrained_for(num_players)
        self._use(*load_model(path), str(path))

    def check_rules(self, rules: Rules) -> None:
        if rules.num_players != self.num_players:
            self.use_players(rules.num_players)
        super().check_rules(rules)

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: PublicView) -> int:
        if view is None and np.shape(observation) != (self.input_size,):
            # No view to read the rules from: the observation's size tells the player count.
            players = (
                players_of_observation(np.shape(observation)[0])
                if len(np.shape(observation)) == 1
                else None
            )
            if players is not None:
                self.use_players(players)
        return super().act(observation, action_mask, view)


def load_policy_agent(
    path_or_pretrained: str, seed: int | None = None, num_players: int | None = None, **options: Any
) -> Agent:
    """An agent from a model file (``PATH.safetensors``), ``"pretrained"`` (the shipped model
    for the game's player count: ``num_players`` when given, else the count of the first game
    it meets) or ``"pretrained_3p"`` (one shipped model by name). Options: ``deterministic``
    (default true: argmax over the legal actions). A ``.zip`` is refused (see
    :func:`zip_refusal`)."""
    unknown = sorted(set(options) - {"deterministic"})
    if unknown:
        raise ValueError(
            f"policy agent {safe_text(repr(path_or_pretrained))}: unknown option(s) "
            f"{safe_text(', '.join(unknown))}; options of a policy: deterministic"
        )
    deterministic = _as_bool("deterministic", options.get("deterministic", True))
    if path_or_pretrained == "pretrained":
        return PretrainedAgent(
            2 if num_players is None else num_players, seed=seed, deterministic=deterministic
        )
    named = PRETRAINED_NAME.fullmatch(path_or_pretrained)
    path = _pretrained_for(int(named.group(1))) if named else Path(path_or_pretrained)
    if path.suffix == ".zip":
        raise ValueError(zip_refusal(path))
    if path.suffix != MODEL_SUFFIX:
        raise ValueError(f"model {safe_text(path)}: a policy file must end in {MODEL_SUFFIX}")
    layers, sidecar = load_model(path)
    agent = PolicyAgent(layers, sidecar, seed=seed, deterministic=deterministic, path=str(path))
    if named:
        agent.name = path_or_pretrained
    if num_players is not None:
        if num_players != agent.num_players:
            raise ValueError(
                f"{agent.name} was trained for {agent.num_players} players, but "
                f"{num_players} players were asked for"
            )
    return agent
