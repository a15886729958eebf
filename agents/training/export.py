"""Write a torch MLP policy as a trash-env model file, from any training pipeline.

The model file (``.safetensors`` tensors with the sidecar in its metadata, and a readable
``.json`` copy beside it; :mod:`agents.policies.policy`) is what ``evaluate.py``, ``python -m
agents.play`` and the ``PATH.safetensors`` agent spec load. The network it describes is an
actor MLP over the observation (plus the ``pairs`` features when asked; agents/policies/features.py)
ending in the 13 action logits, and a critic MLP ending in one value; the critic is not used
for play, so a pipeline without one may leave it out (zeros are written). Imports torch and
numpy only, never a learning library; a network given as plain arrays (a JAX or numpy
pipeline's, ``[(weight, bias), ...]``) is written without importing torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

ACTIVATION_NAMES = {"Tanh": "tanh", "ReLU": "relu"}


class ArrayLinear(NamedTuple):
    """A linear layer as plain arrays, as ``nn.Linear`` holds them: ``weight`` is
    ``(out_features, in_features)``, ``bias`` ``(out_features,)``."""

    weight: np.ndarray
    bias: np.ndarray

    @property
    def in_features(self) -> int:
        return int(self.weight.shape[1])

    @property
    def out_features(self) -> int:
        return int(self.weight.shape[0])


def array_layers(net: Any) -> list[ArrayLinear] | None:
    """``net`` as :class:`ArrayLinear` layers if it is a list of ``(weight, bias)`` array
    pairs (numpy, JAX or anything ``np.asarray`` reads), else None; ``ValueError`` for
    pairs whose shapes do not chain."""
    if not isinstance(net, (list, tuple)) or not net:
        return None
    if not all(isinstance(pair, (list, tuple)) and len(pair) == 2 for pair in net):
        return None
    layers = [ArrayLinear(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in net]
    width = None
    for i, layer in enumerate(layers):
        w, b = layer.weight, layer.bias
        if w.ndim != 2 or b.shape != (w.shape[0],) or (width is not None and w.shape[1] != width):
            raise ValueError(
                f"layer {i}: weight {w.shape} and bias {b.shape} do not make a linear layer "
                f"after {width} features (weight is (out, in), bias (out,))"
            )
        width = w.shape[0]
    return layers


def linear_layers(net: Any, activation: str | None = None) -> tuple[list[Any], str | None]:
    """The ``nn.Linear`` layers of ``net`` (an ``nn.Sequential`` or a list of layers, or
    plain ``(weight, bias)`` arrays: :func:`array_layers`) and its activation's name
    (``tanh`` or ``relu``: the one module type between them, or ``activation`` when given);
    ``ValueError`` for anything else in between."""
    arrays = array_layers(net)
    if arrays is not None:
        return arrays, activation
    import torch.nn as nn

    modules = list(net) if isinstance(net, (nn.Sequential, list, tuple)) else None
    if modules is None:
        raise ValueError(
            f"the network must be an nn.Sequential or a list of nn.Linear layers, "
            f"got {type(net).__name__}"
        )
    linears, found = [], set()
    for module in modules:
        if isinstance(module, nn.Linear):
            linears.append(module)
        elif type(module).__name__ in ACTIVATION_NAMES:
            found.add(ACTIVATION_NAMES[type(module).__name__])
        else:
            raise ValueError(
                f"the network holds a {type(module).__name__}: only nn.Linear "
                f"layers and one of {', '.join(ACTIVATION_NAMES)} are saved"
            )
    if not linears:
        raise ValueError("the network has no nn.Linear layer")
    if len(found) > 1 or (activation is not None and found and found != {activation}):
        raise ValueError(f"the network mixes activations {sorted(found)}: one is saved")
    return linears, activation if activation is not None else (found.pop() if found else None)


def _weights(prefix: str, hidden: list[Any], head_name: str, head: Any) -> dict[str, np.ndarray]:
    tensors = {}
    for i, layer in enumerate(hidden):
        tensors[f"{prefix}.{2 * i}.weight"] = layer.weight
        tensors[f"{prefix}.{2 * i}.bias"] = layer.bias
    tensors[f"{head_name}.weight"] = head.weight
    tensors[f"{head_name}.bias"] = head.bias
    return tensors


def _array(value: Any) -> np.ndarray:
    if value is None:
        raise ValueError("every nn.Linear layer must have a bias to be saved")
    if isinstance(value, np.ndarray):
        return value.astype(np.float32, copy=True)
    return value.detach().cpu().numpy().astype(np.float32, copy=True)


def mlp_tensors(
    actor: Any, value: Any = None, activation: str | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The model file's tensors (named as stable-baselines3's ``MlpPolicy`` names them) and
    the ``network`` part of the sidecar, from an actor MLP ending in 13 logits and an
    optional critic MLP ending in 1 value (None: zeros of the actor's hidden sizes)."""
    actor_layers, actor_activation = linear_layers(actor, activation)
    name = activation or actor_activation
    if value is not None:
        value_layers, value_activation = linear_layers(value, name)
        name = name or value_activation
    name = name or "tanh"  # one layer, nothing in between: the name is not used
    if name not in ACTIVATION_NAMES.values():
        raise ValueError(
            f"activation must be one of {', '.join(ACTIVATION_NAMES.values())}, got {name!r}"
        )
    *hidden, action_head = actor_layers
    inputs = actor_layers[0].in_features
    tensors = {
        k: _array(v)
        for k, v in _weights("mlp_extractor.policy_net", hidden, "action_net", action_head).items()
    }
    if value is not None:
        *value_hidden, value_head = value_layers
        tensors.update(
            {
                k: _array(v)
                for k, v in _weights(
                    "mlp_extractor.value_net", value_hidden, "value_net", value_head
                ).items()
            }
        )
        value_sizes = [layer.out_features for layer in value_hidden]
    else:
        value_sizes = [layer.out_features for layer in hidden]
        width = inputs
        for i, size in enumerate(value_sizes):
            tensors[f"mlp_extractor.value_net.{2 * i}.weight"] = np.zeros((size, width), np.float32)
            tensors[f"mlp_extractor.value_net.{2 * i}.bias"] = np.zeros(size, np.float32)
            width = size
        tensors["value_net.weight"] = np.zeros((1, width), np.float32)
        tensors["value_net.bias"] = np.zeros(1, np.float32)
    network = {
        "kind": "mlp",
        "inputs": inputs,
        "hidden": [x.out_features for x in hidden],
        "value_hidden": value_sizes,
        "activation": name,
        "actions": action_head.out_features,
    }
    return tensors, network


def export_mlp(
    path: str | Path,
    actor: Any,
    *,
    rules: Any = None,
    features: str = "obs",
    value: Any = None,
    activation: str | None = None,
    info: dict[str, Any] | None = None,
) -> Path:
    """Write ``actor`` (and ``value``) as the model file ``path`` (``.safetensors``, plus
    its ``.json`` sidecar copy), each file atomically.

    Args:
        actor: an ``nn.Sequential`` (or a list of ``nn.Linear`` layers, or of ``(weight,
            bias)`` arrays: weight ``(out, in)``) from the network's inputs to the 13 action
            logits, ``Tanh`` or ``ReLU`` between the layers.
        rules: the :class:`trash_env.rules.Rules` (or a dict of options) it was trained for.
        features: what the first layer reads: ``obs`` (the observation) or ``pairs`` (the
            observation followed by agents/policies/features.py's pair features).
        value: the critic the same way, ending in one value; None writes zeros.
        activation: ``tanh`` or ``relu`` for a list of layers or arrays (found in a
            Sequential).
        info: more sidecar fields (the training's figures: timesteps, seed, ...).
    """
    from agents.policies.features import FEATURES
    from agents.policies.model_file import trained_for, write_policy
    from agents.training.eval_curve import rules_of

    if features not in FEATURES:
        raise ValueError(f"features must be one of {', '.join(FEATURES)}, got {features!r}")
    rules = rules_of(rules)
    tensors, network = mlp_tensors(actor, value, activation)
    inputs = network["inputs"]
    from agents.policies.features import extra_inputs
    from trash_env.observation import observation_size

    expected = observation_size(rules.num_players) + extra_inputs(features, rules.num_players)
    if inputs != expected:
        raise ValueError(
            f"the network reads {inputs} inputs, but {rules.num_players}-player "
            f"observations with features {features!r} have {expected}"
        )
    network["inputs"] = observation_size(rules.num_players)
    network["features"] = features
    base = {
        "num_players": rules.num_players,
        "rules": rules.to_dict(),
        "trained_for": trained_for(rules),
    }
    return write_policy(path, tensors, network, {**base, **(info or {})})


def export_sb3_policy(model: Any, path: str | Path, info: dict[str, Any]) -> Path:
    """A stable-baselines3 ``MlpPolicy`` model (``model.policy``) through :func:`export_mlp`:
    its actor and critic MLPs and their heads."""
    from agents.policies.convert import features_of

    policy = model.policy
    extractor = policy.mlp_extractor
    rules = info["rules"]
    return export_mlp(
        path,
        [*extractor.policy_net, policy.action_net],
        rules=rules,
        features=features_of(policy),
        value=[*extractor.value_net, policy.value_net],
        info=info,
    )
