"""The agent interface and the spec strings that name agents.

An agent sees what a seat may see: its observation vector and action mask, and a
:class:`trash_env.view.PublicView` of the game (public information and determinisations
only). ``act`` returns one of the legal actions of the env's ``Discrete(13)`` space.
Agents that decide from the view and mask alone set ``uses_observation = False``: the tables
that seat them (the evaluation, the single-agent env) then pass ``None`` for the observation
and skip encoding it, a third of an opponent's cost in the single-agent env.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from trash_env.view import PublicView


class Agent:
    """Base class: override :meth:`act`. ``seed`` feeds the agent's own random generator."""

    name = "agent"
    uses_observation = True  # False: act() gets None for the observation (see the module doc)

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Called at the start of every episode; reseeds when given a seed."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(
        self, observation: np.ndarray | None, action_mask: np.ndarray, view: PublicView
    ) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"
    uses_observation = False

    def act(self, observation: object, action_mask: np.ndarray, view: PublicView) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


_REGISTRY: dict[str, tuple[Callable[..., Agent], dict[str, type]]] = {}


def register_agent(name: str, factory: Callable[..., Agent], **options: type) -> None:
    """Make ``factory`` selectable as spec ``name``; ``options`` maps each spec option to the
    type its text is converted to (int, float, str or bool)."""
    _REGISTRY[name] = (factory, options)


register_agent("random", RandomAgent)


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``"name:key=value,key=value"`` into the name and its raw options."""
    name, _, rest = spec.partition(":")
    options: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"agent spec {spec!r}: option {item!r} must look like key=value")
        options[key.strip()] = value.strip()
    return name.strip(), options


def _convert(spec: str, key: str, value: str, kind: type) -> object:
    if kind is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"agent spec {spec!r}: option {key} must be true or false, got {value!r}")
    try:
        return kind(value)
    except ValueError:
        raise ValueError(
            f"agent spec {spec!r}: option {key} must be {kind.__name__}, got {value!r}"
        ) from None


MODEL_SUFFIX = ".safetensors"
_PRETRAINED_NAME = re.compile(r"pretrained_[0-9]p")  # one shipped model: pretrained_3p


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names: a registered bot (``greedy``, ``search:rollouts=200``) or
    a trained model (a path ending in ``.safetensors``, ``pretrained`` for the game's player
    count, or ``pretrained_3p``). A ``.zip`` model is
    refused: loading one unpickles it, and a crafted file would run code."""
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, got {type(spec).__name__}")
    _load_builtin_agents()
    name, raw = parse_spec(spec)
    lowered = name.lower()
    if lowered.endswith(".zip"):
        from agents.policy import zip_refusal

        raise ValueError(zip_refusal(name))
    if lowered.endswith(MODEL_SUFFIX) or name == "pretrained" or _PRETRAINED_NAME.fullmatch(name):
        from agents.policy import load_policy_agent

        return load_policy_agent(name, seed=seed, **raw)
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY) + ["pretrained", "pretrained_Np",
                                                "PATH" + MODEL_SUFFIX])
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {known}")
    factory, allowed = _REGISTRY[name]
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        allowed_text = ", ".join(sorted(allowed)) or "none"
        raise ValueError(
            f"agent spec {spec!r}: unknown option(s) {', '.join(unknown)}; "
            f"options of {name}: {allowed_text}"
        )
    options = {key: _convert(spec, key, value, allowed[key]) for key, value in raw.items()}
    agent = factory(seed=seed, **options)
    agent.spec = spec
    return agent


def _load_builtin_agents() -> None:
    """Import the bot modules so that they register themselves (kept lazy and cheap)."""
    import importlib

    for module in ("agents.heuristics", "agents.search", "agents.human"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
