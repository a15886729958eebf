"""Trained policies as agents: a MaskablePPO (or PPO) model saved by ``train.py``.

A model is a stable-baselines3 ``.zip`` with a JSON sidecar beside it (same name, ``.json``)
that records what it was trained for: the observation layout (``obs_version``,
``observation_size``), the rules, the number of players, timesteps, seed and evaluation figures.
Loading checks the sidecar against this version of :mod:`trash_env.observation` and the model's
own input size, so a model made for another layout fails at once with a ``ValueError`` that
says why, instead of playing nonsense or failing deep inside torch.

Why a NumPy forward pass: agents act one observation at a time (opponents inside the solo env,
evaluation), where torch's per-call overhead costs ~10x the arithmetic of a 128x128 MLP. The
policy's layers are copied into NumPy arrays once; the actor is always given the action mask
(illegal logits are set to -inf) and picks the argmax by default.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from trash_env.observation import OBS_VERSION, observation_size
from trash_env.view import PublicView

MODELS_DIR = Path(__file__).resolve().parent / "models"
PRETRAINED = MODELS_DIR / "pretrained_2p.zip"
SIDECAR_FORMAT = "trash-env-policy"


def sidecar_path(model_path: str | Path) -> Path:
    """``model.zip`` -> ``model.json``."""
    path = Path(model_path)
    return path.with_suffix(".json")


def write_sidecar(model_path: str | Path, info: dict[str, Any]) -> Path:
    """Write the JSON sidecar of a saved model (``info`` plus the observation layout)."""
    num_players = int(info["num_players"])
    data = {
        "format": SIDECAR_FORMAT,
        "obs_version": OBS_VERSION,
        "observation_size": observation_size(num_players),
        **info,
    }
    path = sidecar_path(model_path)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def read_sidecar(model_path: str | Path) -> dict[str, Any]:
    """The sidecar of a model, checked against this observation layout (``ValueError`` if not)."""
    path = sidecar_path(model_path)
    if not path.is_file():
        raise ValueError(
            f"model {model_path}: no sidecar {path.name} beside it; models saved by train.py "
            "have one (it records the observation layout the model was trained on)"
        )
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"model sidecar {path}: not valid JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise ValueError(f"model sidecar {path}: not a trash-env policy sidecar")
    version, size = data.get("obs_version"), data.get("observation_size")
    players = data.get("num_players")
    if version != OBS_VERSION:
        raise ValueError(
            f"model {model_path} was trained on observation version {version!r}, but this "
            f"trash-env encodes version {OBS_VERSION}: retrain it with train.py"
        )
    if not isinstance(players, int) or not 2 <= players <= 6 or size != observation_size(players):
        raise ValueError(
            f"model sidecar {path}: observation_size {size!r} does not match "
            f"num_players {players!r} under observation version {OBS_VERSION}"
        )
    return data


def _numpy_layers(policy: Any) -> list[tuple[str, Any]] | None:
    """The actor as a list of NumPy steps, or None if it holds a layer this does not know."""
    import torch.nn as nn

    steps: list[tuple[str, Any]] = []
    modules = list(policy.mlp_extractor.policy_net) + [policy.action_net]
    for module in modules:
        if isinstance(module, nn.Linear):
            weight = module.weight.detach().cpu().numpy().astype(np.float32).T.copy()
            bias = module.bias.detach().cpu().numpy().astype(np.float32).copy()
            steps.append(("linear", (weight, bias)))
        elif isinstance(module, nn.Tanh):
            steps.append(("tanh", None))
        elif isinstance(module, nn.ReLU):
            steps.append(("relu", None))
        else:
            return None
    return steps


class PolicyAgent(Agent):
    """A trained policy. ``deterministic`` picks the most probable legal action; otherwise the
    action is sampled from the masked distribution with the agent's own generator."""

    name = "policy"

    def __init__(
        self,
        model: Any,
        sidecar: dict[str, Any],
        seed: int | None = None,
        deterministic: bool = True,
        path: str = "",
    ) -> None:
        super().__init__(seed)
        self.model = model
        self.sidecar = sidecar
        self.deterministic = deterministic
        self.path = path
        self.num_players = int(sidecar["num_players"])
        self.input_size = int(sidecar["observation_size"])
        self._layers = _numpy_layers(model.policy)
        self.name = f"policy:{Path(path).name}" if path else "policy"

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The actor's logits over the 13 actions for one observation (before masking)."""
        if observation.shape != (self.input_size,):
            raise ValueError(
                f"{self.name} was trained for {self.num_players} players (observation size "
                f"{self.input_size}), got an observation of shape {observation.shape}: "
                "play it at the table size it was trained for"
            )
        if self._layers is None:  # unknown layer type: let torch run the actor
            import torch

            with torch.no_grad():
                obs = torch.as_tensor(observation[None], dtype=torch.float32)
                dist = self.model.policy.get_distribution(obs)
                return dist.distribution.logits[0].numpy().astype(np.float64)
        x = observation.astype(np.float32, copy=False)
        for kind, params in self._layers:
            if kind == "linear":
                x = x @ params[0] + params[1]
            elif kind == "tanh":
                x = np.tanh(x)
            else:
                x = np.maximum(x, 0.0)
        return x.astype(np.float64)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, view: PublicView) -> int:
        logits = self.logits(observation)
        legal = np.asarray(action_mask, bool)
        if not legal.any():
            raise ValueError(f"{self.name}: asked to act with no legal action")
        masked = np.where(legal, logits, -np.inf)
        if self.deterministic:
            return int(np.argmax(masked))
        probs = np.exp(masked - masked.max())
        probs /= probs.sum()
        return int(self.rng.choice(len(probs), p=probs))


def _as_bool(name: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"policy option {name} must be true or false, got {value!r}")


_CACHE: dict[tuple, tuple[Any, dict[str, Any]]] = {}
_CACHE_SIZE = 8


def load_model(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """Load a saved model and its checked sidecar; ``ValueError`` (never a library traceback)
    for a missing, corrupt or mismatched file. Loads are cached per file version (path, size,
    modification time): the envs of one process and an evaluation share one copy, which they
    only read."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"model file {path} not found")
    side = sidecar_path(path)
    stats = [(p.stat().st_size, p.stat().st_mtime_ns) if p.is_file() else None
             for p in (path, side)]
    key = (str(path.resolve()), *stats)
    if key in _CACHE:
        return _CACHE[key]
    loaded = _load_model(path)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = loaded
    return loaded


def _load_model(path: Path) -> tuple[Any, dict[str, Any]]:
    sidecar = read_sidecar(path)
    if not zipfile.is_zipfile(path):
        raise ValueError(f"model file {path} is not a stable-baselines3 .zip (corrupt?)")
    algorithm = sidecar.get("algorithm", "MaskablePPO")
    try:
        if algorithm == "MaskablePPO":
            from sb3_contrib import MaskablePPO as Algorithm
        elif algorithm == "PPO":
            from stable_baselines3 import PPO as Algorithm
        else:
            raise ValueError(f"model {path}: unknown algorithm {algorithm!r} in the sidecar")
    except ImportError as error:
        raise ValueError(
            f"loading {path} needs the train extra (pip install trash-env[train]): {error}"
        ) from None
    try:
        model = Algorithm.load(str(path), device="cpu")
    except Exception as error:  # corrupt archives raise anything from zipfile to torch
        raise ValueError(
            f"model file {path} could not be loaded as a {algorithm} model "
            f"({type(error).__name__}: {error})"
        ) from None
    shape = getattr(model.observation_space, "shape", None)
    if shape != (sidecar["observation_size"],):
        raise ValueError(
            f"model {path} takes observations of shape {shape}, but its sidecar says "
            f"({sidecar['observation_size']},): the files do not belong together"
        )
    if getattr(model.action_space, "n", None) != 13:
        raise ValueError(f"model {path} has action space {model.action_space}, not Discrete(13)")
    return model, sidecar


def load_policy_agent(path_or_pretrained: str, seed: int | None = None, **options: Any) -> Agent:
    """An agent from a model file (``PATH.zip``) or ``"pretrained"`` (the shipped 2-player
    model). Options: ``deterministic`` (default true: argmax over the legal actions)."""
    unknown = sorted(set(options) - {"deterministic"})
    if unknown:
        raise ValueError(
            f"policy agent {path_or_pretrained!r}: unknown option(s) {', '.join(unknown)}; "
            "options of a policy: deterministic"
        )
    deterministic = _as_bool("deterministic", options.get("deterministic", True))
    path = PRETRAINED if path_or_pretrained == "pretrained" else Path(path_or_pretrained)
    if path_or_pretrained == "pretrained" and not path.is_file():
        raise ValueError(f"the pretrained model {path} is missing from this installation")
    model, sidecar = load_model(path)
    agent = PolicyAgent(model, sidecar, seed=seed, deterministic=deterministic, path=str(path))
    if path_or_pretrained == "pretrained":
        agent.name = "pretrained"
    return agent
