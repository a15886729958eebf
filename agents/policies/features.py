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

``fits`` adds two entries to ``pairs``: "the discard top fits my layout" and "the card in hand
fits my layout", exactly ``greedy``'s test, defined in :mod:`trash_env.pairs` as well (the envs'
``observation="fits"`` appends the same). Each is a sum of ``pairs`` entries, so a network could
learn it; but summed over the ten ranks it is one input that every rank trains, and trained from
scratch the network learns "take the discard when it fits" for the ranks it met less often only
late (docs/training.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trash_env.observation import players_of_observation
from trash_env.pairs import FIT_FEATURES, extend, fit_columns, fit_entries, pair_indices

# obs: the observation alone (every model before ``pairs``); pairs; fits: pairs and two more
FEATURES = ("obs", "pairs", "fits")


def extra_inputs(features: str, num_players: int) -> int:
    """How many inputs ``features`` adds to the observation."""
    if features == "obs":
        return 0
    if features in ("pairs", "fits"):
        return len(pair_indices(num_players)[0]) + (FIT_FEATURES if features == "fits" else 0)
    raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")


def players_for(inputs: int) -> int:
    """The player count whose observation has ``inputs`` entries."""
    players = players_of_observation(inputs)
    if players is None:
        raise ValueError(f"no player count has an observation of {inputs} entries")
    return players


class PairFeatures:
    """NumPy ``pairs`` (or ``fits``) features: the observation(s) with the products appended
    (and, with ``fits``, the two fit entries)."""

    def __init__(self, num_players: int, fits: bool = False) -> None:
        self.num_players = num_players
        self.fits = fits

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return extend(x, self.num_players, "fits" if self.fits else "pairs")


def torch_extractor() -> type:
    """stable-baselines3's features extractor computing ``pairs`` or ``fits`` (its
    ``features`` argument; built on first use, so that this module imports without torch)."""
    global _TorchPairs
    if _TorchPairs is None:
        import torch
        from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

        class PairFeaturesExtractor(BaseFeaturesExtractor):
            """The observation with the ``pairs`` products appended, and with ``fits`` the
            two fit entries (no parameters)."""

            def __init__(self, observation_space: Any, features: str = "pairs") -> None:
                if features not in ("pairs", "fits"):
                    raise ValueError(f"features must be pairs or fits, got {features!r}")
                inputs = int(observation_space.shape[0])
                players = players_for(inputs)
                super().__init__(observation_space, inputs + extra_inputs(features, players))
                self.features = features
                left, right = pair_indices(players)
                slots, wilds = fit_entries()
                # not persistent: the state dict (and so a model file) holds no feature tables
                tables = {"left": left, "right": right, "slots": slots, "wilds": wilds}
                for name, table in tables.items():
                    self.register_buffer(name, torch.as_tensor(table), persistent=False)

            def forward(self, observations: Any) -> Any:
                x = observations.float()
                pairs = x[:, self.left] * x[:, self.right]
                if self.features == "pairs":
                    return torch.cat([x, pairs], dim=1)
                fit = fit_columns(x, pairs, self.slots, self.wilds)
                return torch.cat([x, pairs, fit], dim=1)

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
