"""What an agent is to trash_env, and the registry that turns spec strings into agents.

trash_env seats agents (the single-agent env's opponents, the match runner of
:mod:`trash_env.match`) but never imports the bots: they live in the ``agents`` package, which
builds on this module. An agent is an object with

- ``act(observation, action_mask, view) -> int``: one of the legal actions of ``Discrete(13)``,
  given the seat's observation vector (``None`` when ``uses_observation`` is False), its action
  mask and a :class:`trash_env.view.PublicView` (public information only);
- ``reset(seed=None)``: called before every game, reseeding the agent's own generator;
- ``uses_observation``: False for agents that decide from the view and mask alone, so that the
  tables seating them skip encoding the observation (docs/agents.md says what it saves);
- ``name``: a short label for tables and reports.

:class:`Agent` is the base class that implements it (``agents.bots.base.Agent`` is this class).

Spec strings (``"greedy"``, ``"search:rollouts=200"``, ``"model.safetensors"``) are resolved by
:func:`make_agent` through a name -> factory table filled by :func:`register_agent`. So that
``TrashSoloEnv(opponents=["greedy"])`` works without importing ``agents``, the first unknown
name loads the modules advertised under the ``trash_env.agents`` entry-point group (the
trash-env distribution declares its built-in bots there, as Gymnasium finds env plugins). A
source checkout that was never installed (or installed before the group existed) has no entry
points: then the modules of that table (:data:`CHECKOUT_AGENT_MODULES`) are imported from the
``agents`` package beside this one. Without either, ``import agents`` registers the built-ins,
and the error for an unknown name says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from trash_env.seeding import check_seed
from trash_env.view import PublicView

ENTRY_POINT_GROUP = "trash_env.agents"


class Agent:
    """Base class of agents (see the module docstring): override :meth:`act`. ``seed`` feeds
    the agent's own random generator ``rng``."""

    name = "agent"
    uses_observation = True  # False: act() gets None for the observation

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def reset(self, seed: int | None = None) -> None:
        """Called at the start of every episode; reseeds when given a seed."""
        if seed is not None:
            self.rng = np.random.default_rng(check_seed(seed))

    def act(self, observation: np.ndarray | None, action_mask: np.ndarray, view: PublicView) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


Factory = Callable[..., Agent]
Loader = Callable[[str, "int | None", dict], Agent]

_FACTORIES: dict[str, tuple[Factory, dict[str, type]]] = {}
# Model-file formats (a name ending in the key, case-insensitive) and names such as
# "pretrained" whose loader parses its own options: key -> (loader, listed in errors).
_SUFFIX_LOADERS: dict[str, tuple[Loader, bool]] = {}
_NAME_LOADERS: dict[str, Loader] = {}
_PATTERN_LOADERS: dict[str, tuple[re.Pattern[str], Loader]] = {}  # label -> (pattern, loader)
_entry_points_loaded = False
_entry_points_found = False


def register_agent(name: str, factory: Factory, **options: type) -> None:
    """Make ``factory`` selectable as spec ``name``; ``options`` maps each spec option to the
    type its text is converted to (int, float, str or bool). ``factory(seed=..., **options)``
    builds the agent."""
    _FACTORIES[name] = (factory, options)


def register_agent_loader(
    key: str, loader: Loader, listed: bool = True, pattern: str | None = None
) -> None:
    """Make ``loader(name, seed, raw_options)`` build the agents of specs whose name ends in
    ``key`` (a file suffix such as ``".safetensors"``, matched case-insensitively), whose
    name matches the regular expression ``pattern`` in full (``key`` is then its label in
    error messages, e.g. ``"pretrained_Np"``), or else whose name is ``key``. ``listed=False``
    keeps a suffix out of the "known agents" of error messages (a format only ever refused)."""
    if pattern is not None:
        _PATTERN_LOADERS[key] = (re.compile(pattern), loader)
    elif key.startswith("."):
        _SUFFIX_LOADERS[key.lower()] = (loader, listed)
    else:
        _NAME_LOADERS[key] = loader


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


_PLAIN_NUMBER = {
    int: re.compile(r"-?[0-9]{1,18}"),
    float: re.compile(r"-?[0-9]{1,18}(\.[0-9]{0,18})?|-?\.[0-9]{1,18}"),
}


def _convert(spec: str, key: str, value: str, kind: type) -> object:
    if kind is bool:
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"agent spec {spec!r}: option {key} must be true or false, got {value!r}")
    # Numbers are written plainly: int("+3_000_000") and float("nan") would pass otherwise.
    pattern = _PLAIN_NUMBER.get(kind)
    if pattern is not None and not pattern.fullmatch(value):
        raise ValueError(
            f"agent spec {spec!r}: option {key} must be {kind.__name__}, got {value!r} "
            f"(written as plain digits{', with a point' if kind is float else ''})"
        )
    try:
        return kind(value)
    except ValueError:
        raise ValueError(
            f"agent spec {spec!r}: option {key} must be {kind.__name__}, got {value!r}"
        ) from None


# The modules of pyproject.toml's ``trash_env.agents`` entry points (tests/test_layering.py
# holds the two equal), for a source checkout that was never installed: written here so that
# nothing reads pyproject.toml at run time.
CHECKOUT_AGENT_MODULES = (
    "agents.bots.base",
    "agents.bots.heuristics",
    "agents.bots.search",
    "agents.bots.optimal",
    "agents.play.human",
)


def _checkout_entry_points() -> list[str]:
    """:data:`CHECKOUT_AGENT_MODULES` when this trash_env lies in a source checkout beside its
    ``agents`` package (never installed, or installed before the entry points existed), else
    none: another ``agents`` package on the path is not ours."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("agents")
    if spec is None or spec.origin is None:
        return []
    if Path(spec.origin).resolve().parent.parent != Path(__file__).resolve().parent.parent:
        return []
    return list(CHECKOUT_AGENT_MODULES)


def load_entry_points() -> bool:
    """Import the modules of the ``trash_env.agents`` entry points (once) so that they
    register their agents; without installed ones, those of a source checkout's ``agents``
    (:data:`CHECKOUT_AGENT_MODULES`). Return whether any was found."""
    global _entry_points_loaded, _entry_points_found
    if not _entry_points_loaded:
        import importlib
        from importlib.metadata import entry_points

        _entry_points_loaded = True
        installed = list(entry_points(group=ENTRY_POINT_GROUP))
        for entry in installed:
            entry.load()
        modules = [] if installed else _checkout_entry_points()
        for value in modules:
            importlib.import_module(value.partition(":")[0].strip())
        _entry_points_found = bool(installed or modules)
    return _entry_points_found


def _find(name: str) -> tuple[str, Any] | None:
    lowered = name.lower()
    for suffix, (loader, _) in _SUFFIX_LOADERS.items():
        if lowered.endswith(suffix):
            return "loader", loader
    if name in _NAME_LOADERS:
        return "loader", _NAME_LOADERS[name]
    for pattern, loader in _PATTERN_LOADERS.values():
        if pattern.fullmatch(name):
            return "loader", loader
    if name in _FACTORIES:
        return "factory", _FACTORIES[name]
    return None


def known_agents() -> list[str]:
    """The spec names an error message lists: registered bots, named loaders and model files."""
    return (
        sorted(_FACTORIES)
        + sorted(_NAME_LOADERS)
        + list(_PATTERN_LOADERS)
        + ["PATH" + suffix for suffix, (_, listed) in _SUFFIX_LOADERS.items() if listed]
    )


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build the agent a spec names: a registered bot (``greedy``, ``search:rollouts=200``) or
    a model loaded by a registered loader (``pretrained``, ``PATH.safetensors``)."""
    if not isinstance(spec, str):
        raise ValueError(f"agent spec must be a string, got {type(spec).__name__}")
    name, raw = parse_spec(spec)
    found = _find(name)
    if found is None:
        installed = load_entry_points()
        found = _find(name)
        if found is None:
            message = (
                f"unknown agent {name!r} in spec {spec!r}; known agents: "
                f"{', '.join(known_agents()) or 'none registered'}"
            )
            if not installed and not _FACTORIES:
                message += (
                    f" (no {ENTRY_POINT_GROUP!r} entry points: trash-env is not installed; "
                    "`import agents` registers the built-in bots)"
                )
            raise ValueError(message)
    kind, target = found
    if kind == "loader":
        loaded = target(name, seed, raw)
        loaded.spec = spec  # what rebuilds it (a checkpoint names its seated policies so)
        return loaded
    factory, allowed = target
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
