"""stable-baselines3 policies into trash-env model files: from a model in memory (train.py
saves with :func:`save_sb3_policy`) or from a ``.zip`` you trained yourself.

``python -m agents.policies.convert OLD.zip NEW.safetensors --trust-pickle`` converts a ``.zip``
and its
old-style ``.json`` sidecar. It unpickles the ``.zip`` (stable-baselines3 has no other way to
read one): never run it on a file from someone else. Needs the ``train`` extra.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, cast

import numpy as np

from agents.policies.features import FEATURES, torch_extractor
from agents.policies.model_file import (
    ACTIVATIONS,
    network_tensors,
    parse_json,
    sidecar_path,
    write_policy,
)
from trash_env.files import safe_text

# The algorithms a converted sidecar may name: (module, class) that loads its .zip.
ALGORITHMS = {"MaskablePPO": ("sb3_contrib", "MaskablePPO"), "PPO": ("stable_baselines3", "PPO")}


def policy_tensors(policy: Any) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The tensors of a stable-baselines3 ``MlpPolicy`` (torch) and the network description
    the sidecar records; ``ValueError`` for an architecture this loader cannot rebuild."""
    import torch.nn as nn

    names: dict[Any, str] = {nn.Tanh: "tanh", nn.ReLU: "relu"}
    activation = names.get(getattr(policy, "activation_fn", None))
    if activation is None:
        raise ValueError(
            f"policy activation {policy.activation_fn!r} cannot be saved: "
            f"use one of {', '.join(ACTIVATIONS)}"
        )

    def sizes(net: Any) -> list[int]:
        return [m.out_features for m in net if isinstance(m, nn.Linear)]

    features = features_of(policy)
    extractor = policy.mlp_extractor
    network = {
        "kind": "mlp",
        "inputs": int(policy.observation_space.shape[0]),
        "features": features,
        "hidden": sizes(extractor.policy_net),
        "value_hidden": sizes(extractor.value_net),
        "activation": activation,
        "actions": int(policy.action_space.n),
    }
    tensors = {
        name: value.detach().cpu().numpy().astype(np.float32, copy=True)
        for name, value in policy.state_dict().items()
    }
    expected = network_tensors(network)
    if set(tensors) != set(expected) or any(tensors[k].shape != v for k, v in expected.items()):
        raise ValueError(
            "the policy is not a plain MlpPolicy (separate actor and critic "
            "MLPs): it cannot be saved as a trash-env policy"
        )
    return tensors, network


def features_of(policy: Any) -> str:
    """The name (agents/policies/features.py) of the input features of a stable-baselines3 policy;
    ``ValueError`` for a features extractor this loader cannot rebuild."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    extractor = (
        policy.features_extractor
        if policy.share_features_extractor
        else policy.pi_features_extractor
    )
    if type(extractor) is FlattenExtractor:
        return "obs"
    if type(extractor) is torch_extractor():
        return str(cast(Any, extractor).features)  # the class is built at run time
    raise ValueError(
        f"policy features extractor {type(extractor).__name__} cannot be saved: "
        f"train with one of the features {', '.join(FEATURES)}"
    )


def save_sb3_policy(model: Any, path: str | Path, info: dict[str, Any]) -> Path:
    """Save a stable-baselines3 model's policy as a trash-env model file."""
    tensors, network = policy_tensors(model.policy)
    return write_policy(path, tensors, network, info)


def convert_sb3_zip(zip_path: str | Path, out: str | Path, *, trust_pickle: bool) -> Path:
    """Convert a stable-baselines3 ``.zip`` (and its old-style ``.json`` sidecar beside it)
    into a model file. This UNPICKLES the ``.zip``: ``trust_pickle=True`` says it is yours."""
    if trust_pickle is not True:
        raise ValueError(
            "converting a .zip unpickles it (a crafted file runs code): pass "
            "trust_pickle=True (--trust-pickle) only for a file you made yourself"
        )
    zip_path = Path(zip_path)
    old = sidecar_path(zip_path)
    if not old.is_file():
        raise ValueError(f"{safe_text(zip_path)}: no sidecar {old.name} beside it")
    info = parse_json(old.read_bytes(), f"sidecar {safe_text(old)}")
    if not isinstance(info, dict):
        raise ValueError(f"sidecar {safe_text(old)} is not a JSON object")
    algorithm = info.get("algorithm", "MaskablePPO")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"{safe_text(old)}: unknown algorithm {safe_text(repr(algorithm))}")
    module, name = ALGORITHMS[algorithm]
    algorithm_class = getattr(importlib.import_module(module), name)
    if not zip_path.is_file():
        raise ValueError(f"{safe_text(zip_path)}: no such file")
    try:
        model = algorithm_class.load(str(zip_path), device="cpu")
    except Exception as error:  # zipfile's, torch's and pickle's errors: one sentence instead
        raise ValueError(
            f"{safe_text(zip_path)} is not a readable {algorithm} model .zip "
            f"({type(error).__name__}: {safe_text(error)[:200]})"
        ) from None
    for key in ("format", "obs_version", "observation_size", "network"):
        info.pop(key, None)
    info["converted_from"] = zip_path.name
    return save_sb3_policy(model, out, info)


def main(argv: list[str] | None = None) -> int:
    """``python -m agents.policies.convert OLD.zip NEW.safetensors --trust-pickle``."""
    from trash_env.cli import Parser

    parser = Parser(
        prog="python -m agents.policies.convert",
        description="Convert a stable-baselines3 .zip you trained yourself (and its .json "
        "sidecar beside it) into a trash-env model file. WARNING: this unpickles the .zip, "
        "which runs any code a crafted file holds: never use it on a file from someone else.",
    )
    parser.add_argument("zip", type=Path, help="OLD.zip (OLD.json beside it)")
    parser.add_argument("out", type=Path, help="NEW.safetensors (NEW.json is written beside it)")
    parser.add_argument(
        "--trust-pickle",
        action="store_true",
        help="required: confirms the .zip is your own (it is unpickled)",
    )
    args = parser.parse_args(argv)
    try:
        path = convert_sb3_zip(args.zip, args.out, trust_pickle=args.trust_pickle)
    except ValueError as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path} and {sidecar_path(path).name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
