"""Input features a policy network computes from the observation before its first layer.

Why: in Trash a card of rank r belongs in slot r, so most decisions turn on one conjunction,
"the card on offer has rank r *and* my slot r is still open" (or "the card is wild"). In the
observation (trash_env/observation.py) the rank and the slot's state are separate one-hots, and
a plain MLP has to learn each of those products from a noisy game result, and trained from
scratch it kept passing over offered cards that fit (docs/training.md has the figures).
``pairs`` hands it the products directly: the 108 entries tabled in :mod:`trash_env.pairs`.

Every feature is the product of two observation entries, so the features are public
information like the observation itself. The table is defined once, in :mod:`trash_env.pairs`
(the envs' ``observation="pairs"`` option appends the same entries); its two index tables
serve NumPy (the agents' forward pass) and torch (training). The features hold no parameters:
a model file records only their name (``network.features`` in the sidecar).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trash_env.observation import players_of_observation
from trash_env.pairs import pair_indices

FEATURES = ("obs", "pairs")  # obs: the observation alone (every model before ``pairs``)


def extra_inputs(features: str, num_players: int) -> int:
    """How many inputs ``features`` adds to the observation."""
    if features == "obs":
        return 0
    if features == "pairs":
        return len(pair_indices(num_players)[0])
    raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")


def players_for(inputs: int) -> int:
    """The player count whose observation has ``inputs`` entries."""
    players = players_of_observation(inputs)
    if players is None:
        raise ValueError(f"no player count has an observation of {inputs} entries")
    return players


class PairFeatures:
    """NumPy ``pairs`` features: the observation(s) with the products appended."""

    def __init__(self, num_players: int) -> None:
        self.left, self.right = pair_indices(num_players)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([x, x[..., self.left] * x[..., self.right]], axis=-1)


def torch_extractor() -> type:
    """stable-baselines3's features extractor computing ``pairs`` (built on first use, so
    that this module imports without torch)."""
    global _TorchPairs
    if _TorchPairs is None:
        import torch
        from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

        class PairFeaturesExtractor(BaseFeaturesExtractor):
            """The observation with the ``pairs`` products appended (no parameters)."""

            def __init__(self, observation_space: Any) -> None:
                inputs = int(observation_space.shape[0])
                left, right = pair_indices(players_for(inputs))
                super().__init__(observation_space, inputs + len(left))
                # not persistent: the state dict (and so a model file) holds no feature tables
                self.register_buffer("left", torch.as_tensor(left), persistent=False)
                self.register_buffer("right", torch.as_tensor(right), persistent=False)

            def forward(self, observations: Any) -> Any:
                x = observations.float()
                return torch.cat([x, x[:, self.left] * x[:, self.right]], dim=1)

        PairFeaturesExtractor.__module__ = __name__
        PairFeaturesExtractor.__qualname__ = "PairFeaturesExtractor"
        _TorchPairs = PairFeaturesExtractor
    return _TorchPairs


_TorchPairs: type | None = None


def __getattr__(name: str) -> Any:
    # ``agents.policies.features.PairFeaturesExtractor`` resolves (for pickles of a training
    # checkpoint)
    # without importing torch when the module itself is imported.
    if name == "PairFeaturesExtractor":
        return torch_extractor()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
