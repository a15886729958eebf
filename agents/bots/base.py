"""The agent interface and the spec strings that name agents, for users of the ``agents`` package.

The interface and the spec registry live in :mod:`trash_env.agent` (trash_env seats agents but
never imports this package); this module re-exports them and registers the agents it defines:
``random`` and the trained-model loaders (``pretrained`` for the game's player count,
``pretrained_3p`` and the other shipped models by name, ``PATH.safetensors``; a ``.zip`` is
refused). An agent sees what a seat may see: its observation vector and action mask, and a
:class:`trash_env.view.PublicView` of the game (public information and determinisations
only). ``act`` returns one of the legal actions of the env's ``Discrete(13)`` space.
Agents that decide from the view and mask alone set ``uses_observation = False``: the tables
that seat them then pass ``None`` for the observation and skip encoding it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.policies.model_file import MODEL_SUFFIX, zip_refusal
from trash_env.agent import (
    Agent,
    known_agents,
    make_agent,
    parse_spec,
    register_agent,
    register_agent_loader,
)
from trash_env.view import PublicView

__all__ = [
    "Agent",
    "RandomAgent",
    "known_agents",
    "make_agent",
    "parse_spec",
    "register_agent",
    "register_agent_loader",
    "MODEL_SUFFIX",
]


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"
    uses_observation = False
    batch_kernel = "random"  # trash_env.vector plays exactly this class compiled

    def act(self, observation: object, action_mask: np.ndarray, view: PublicView) -> int:
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])


def _load_model(name: str, seed: int | None, raw: dict[str, Any]) -> Agent:
    from agents.policies.policy import load_policy_agent

    return load_policy_agent(name, seed=seed, **raw)


def _refuse_zip(name: str, seed: int | None, raw: dict[str, Any]) -> Agent:
    """A ``.zip`` model is refused: loading one unpickles it, and a crafted file would run code."""
    raise ValueError(zip_refusal(name))


register_agent("random", RandomAgent)
register_agent_loader(".zip", _refuse_zip, listed=False)
register_agent_loader(MODEL_SUFFIX, _load_model)
register_agent_loader("pretrained", _load_model)  # the model for the game's player count
_MODELS = Path(__file__).resolve().parent.parent / "policies" / "models"
for _model in sorted(_MODELS.glob("pretrained_*p.safetensors")):
    register_agent_loader(_model.stem, _load_model)  # pretrained_3p: one shipped model by name
