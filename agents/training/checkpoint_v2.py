"""Version 2 checkpoints (objects stored attribute by attribute under ``module:qualname``)
migrated to version 3's fields: the tree is walked as plain data (objects become dicts; nothing
is built from a class name) and the fields are picked out of it. Its rules tables must equal
its rules' (they are rebuilt, never read). Solo envs were stored as objects with nothing that
replays their episodes: they cannot be migrated.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

CONTAINERS = ("list", "tuple", "deque", "set", "frozenset")
SCALAR = re.compile(r"[<>|=][biuf][1248]")


def _dtype(spec: Any) -> np.dtype:
    if isinstance(spec, str) and SCALAR.fullmatch(spec):
        return np.dtype(spec)
    fields = [(n, _dtype(t), tuple(s)) for n, t, *s in spec] if isinstance(spec, list) else None
    if not fields or not all(isinstance(n, str) and len(n) < 64 for n, _, _ in fields):
        raise ValueError("a bad array type")
    return np.dtype([(n, t, *s) for n, t, s in fields])


def _walk(node: Any, arrays: list[np.ndarray], memo: dict[int, Any], depth: int = 0) -> Any:
    """The value a version 2 tree holds, objects as dicts of their attributes."""
    if depth > 64:
        raise ValueError("nested too deeply")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if not isinstance(node, dict):
        raise ValueError("a bare list where a tagged value belongs")
    if "ref" in node:
        return memo[node["ref"]]
    if "float" in node:
        return float(node["float"]) if node["float"] in ("nan", "inf", "-inf") else math.nan
    if "scalar" in node:
        return _walk(node["value"], arrays, memo, depth + 1)
    kind = next(k for k in node if k != "id")

    def sub(value: Any) -> Any:
        return _walk(value, arrays, memo, depth + 1)

    out: Any
    if kind in CONTAINERS or kind in ("dict", "object"):
        out = memo[node["id"]] = [] if kind in CONTAINERS else {}
        if kind in CONTAINERS:
            out.extend(sub(v) for v in node[kind])
        else:
            out.update((sub(k), sub(v)) for k, v in node["dict" if kind == "dict" else "state"])
        return out
    if kind == "array":
        dtype, shape = _dtype(node["dtype"]), [int(s) for s in node["shape"]]
        out = arrays[node["array"]].view(dtype).reshape(shape)
    elif kind in ("generator", "random_state", "plain", "enum"):
        out = sub(node[{"generator": "state", "random_state": kind}.get(kind, "value")])
    elif kind == "namedtuple":
        out = [sub(v) for v in node["items"]]
    elif kind == "dtype":
        out = None
    else:
        raise ValueError(f"an unknown kind {kind[:40]!r}")
    memo[node["id"]] = out
    return out


def _batched_env(venv: dict[str, Any]) -> tuple[dict, dict[str, np.ndarray]]:
    from agents.training.env_state import BATCH_ARRAYS

    # version 2 stored the batch core's attributes by their names of that layout
    stored_as = {**BATCH_ARRAYS, "shaping_potential": "potential", "shaping_deals": "deals_seen"}
    from trash_env.rules import Rules
    from trash_env.vector.batch import RulesArrays

    core, batch = venv["core"], venv["core"]["batch"]
    tables = RulesArrays(Rules.from_options(**core["rules"]))
    for name in ("cfg", "wild", "totals", "deck"):
        mine, stored = getattr(tables, name), batch["arrays"][name]
        if stored.dtype != mine.dtype or stored.tobytes() != mine.tobytes():
            raise ValueError(f"its batched env's rules table {name} differs from its rules'")
    games = batch["games"]
    arrays = {f"games/{name}": games[name] for name in games.dtype.names}
    arrays["game_seeds"] = batch["seeds"]
    arrays["next_game_seeds"] = batch["_seed_buffer"][batch["_seed_pos"] :]
    arrays.update({name: core[attr] for name, attr in stored_as.items()})
    document = {
        "kind": "batched",
        "rules": core["rules"],
        "rng": core["rng"],
        "game_rng": batch["rng"],
        "shaping": core["shaping"],
        "opponents": core["opponent_specs"],
        "policies": [p and p["source"].get("spec") for p in core["policies"]],
    }
    return document, arrays


def migrate(document: dict, tensors: dict[str, np.ndarray]) -> tuple[dict, tuple[dict, dict]]:
    """A version 2 document and its tensors as the training state and env fields that
    agents.training.checkpoint.pack writes as version 3 (then checked as any version 3)."""

    def arrays(prefix: str, count: Any) -> list[np.ndarray]:
        return [tensors.pop(f"{prefix}.{i}") for i in range(min(int(count), len(tensors)))]

    try:
        main = _walk(document["main"], arrays("main", document["main_arrays"]), {})
        envs = [
            _walk(e["tree"], arrays(f"envs.{k}", e["arrays"]), {})
            for k, e in enumerate(document["envs"])
        ]
        if len(envs) != 1 or "core" not in envs[0]:
            raise ValueError(
                "it is a version 2 checkpoint of solo envs (--vec dummy or subproc), which "
                "stored them as objects with nothing to replay their episodes: it cannot be "
                "migrated, start the run again"
            )
        if tensors:
            raise ValueError(f"unexpected tensors {', '.join(sorted(tensors))[:100]}")
        return main, _batched_env(envs[0])
    except (KeyError, TypeError, IndexError, AttributeError, StopIteration) as error:
        raise ValueError(f"a malformed version 2 checkpoint ({type(error).__name__})") from None
