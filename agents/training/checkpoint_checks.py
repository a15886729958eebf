"""Every tensor of a checkpoint checked before training resumes (docs/training.md, "The
checkpoint format"): finite where it holds numbers, the shape the policy and its optimizer
expect, counters in range, random states as their generators define them. A bad one is
refused in one sentence naming the tensor, never a torch traceback mid-training."""

from __future__ import annotations

from typing import Any

import numpy as np

# Adam's state per parameter (torch.optim.Adam): its step count and two moments; amsgrad adds
# the running maximum of the second.
ADAM_MOMENTS = ("exp_avg", "exp_avg_sq")
ADAM_AMSGRAD = "max_exp_avg_sq"


def _refuse(name: str, what: str) -> ValueError:
    return ValueError(f"its tensor {name} {what}")


def _check_groups(groups: list[dict[str, Any]]) -> None:
    """Adam's settings in range: a rate 0 or more (a decayed one ends at 0), an epsilon
    above 0, a weight decay 0 or more, two decays in [0, 1)."""
    for i, group in enumerate(groups):
        betas = group.get("betas", [0.9, 0.999])
        try:
            ok = (
                float(group.get("lr", 1e-3)) >= 0
                and float(group.get("eps", 1e-8)) > 0
                and float(group.get("weight_decay", 0)) >= 0
                and isinstance(betas, list)
                and len(betas) == 2
                and all(0 <= float(b) < 1 for b in betas)
            )
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"its optimizer param_groups/{i} has settings Adam refuses (lr 0 or more, eps "
                "above 0, weight_decay 0 or more, betas two numbers in [0, 1))"
            )


def _pcg64_states(env: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if env["kind"] == "batched":
        return [("env rng", env["rng"]), ("env game_rng", env["game_rng"])]
    return [
        (f"env {i} episode rng", saved["episode"]["rng"])
        for i, saved in enumerate(env["envs"])
        if saved["episode"] is not None
    ]


def check_tensors(document: dict[str, Any], tensors: dict[str, np.ndarray]) -> None:
    """What a checkpoint's tensors must be on their own (no model needed): the policy's,
    the optimizer's and the last observations finite; the optimizer's state Adam's, its
    ``step`` a whole count within what the run's steps allow and its second moments not
    negative; the random states valid (MT19937 not all zero with its position in range,
    torch's of the size torch keeps, PCG64 increments odd as every PCG64 stream's is).
    ``ValueError`` naming the first bad tensor."""
    for name, array in tensors.items():
        numbers = name.startswith(("policy/", "optimizer/")) or name == "last_obs"
        if numbers and not np.isfinite(array).all():
            raise _refuse(name, "holds a value that is not finite (NaN or infinite)")
    groups = document["optimizer"]["param_groups"]
    _check_groups(groups)
    amsgrad = {p: bool(g.get("amsgrad")) for g in groups for p in g["params"]}
    most = int(document["timesteps"]) * int(document["flags"].get("epochs", 1))
    for param, uses_max in amsgrad.items():
        prefix = f"optimizer/{param}/"
        names = {n[len(prefix) :] for n in tensors if n.startswith(prefix)}
        wanted = {"step", *ADAM_MOMENTS, *([ADAM_AMSGRAD] if uses_max else [])}
        if names != wanted:
            raise _refuse(prefix + "*", f"holds {sorted(names)}, Adam's state is {sorted(wanted)}")
        step = tensors[prefix + "step"]
        count = float(step.reshape(-1)[0]) if step.size == 1 and step.ndim <= 1 else -1.0
        if not (0 <= count <= most and count.is_integer()):
            raise _refuse(
                prefix + "step",
                f"must be one whole count from 0 to {most:,} (the steps x --epochs), got "
                f"{step.tolist()!r:.60}",
            )
        moments = [prefix + m for m in (*ADAM_MOMENTS, *([ADAM_AMSGRAD] if uses_max else []))]
        shapes = {tensors[m].shape for m in moments}
        if len(shapes) != 1:
            raise _refuse(prefix + "exp_avg_sq", f"has another shape than {moments[0]}")
        for moment in moments[1:]:
            if (tensors[moment] < 0).any():
                raise _refuse(moment, "holds a negative second moment")
    numpy_words = tensors["rng/numpy"]
    python = tensors["rng/python"]
    if not numpy_words.any():
        raise _refuse("rng/numpy", "is all zero, which no MT19937 state is")
    if not python[:624].any() or int(python[624]) > 624:
        raise _refuse("rng/python", "is not an MT19937 state (all zero, or a position past 624)")
    for what, state in _pcg64_states(document["env"]):
        if state["state"]["inc"] % 2 == 0:
            raise ValueError(
                f"its {what} is not a PCG64 state (its increment inc is even; every PCG64 "
                "stream's is odd)"
            )


def check_fits(tensors: dict[str, np.ndarray], model: Any, venv: Any) -> None:
    """The checkpoint's tensors have the shapes of ``model`` (a new MaskablePPO of the run's
    settings on ``venv``): every policy tensor its parameter's, every optimizer moment its
    parameter's, torch's random state torch's size, the last observations the envs'.
    ``ValueError`` naming the first that differs."""
    import torch

    expected = {f"policy/{k}": tuple(v.shape) for k, v in model.policy.state_dict().items()}
    given = {n for n in tensors if n.startswith("policy/")}
    if given != set(expected):
        odd = sorted(given ^ set(expected))
        raise _refuse(odd[0], "is not one of this network's (or one of its tensors is missing)")
    for name, shape in expected.items():
        if tensors[name].shape != shape:
            raise _refuse(name, f"has shape {tensors[name].shape}, this network's is {shape}")
    params = [p for g in model.policy.optimizer.param_groups for p in g["params"]]
    for i, param in enumerate(params):
        for moment in (*ADAM_MOMENTS, ADAM_AMSGRAD):
            array = tensors.get(f"optimizer/{i}/{moment}")
            if array is not None and array.shape != tuple(param.shape):
                raise _refuse(
                    f"optimizer/{i}/{moment}",
                    f"has shape {array.shape}, its parameter's is {tuple(param.shape)}",
                )
    if any(name.startswith(f"optimizer/{len(params)}/") for name in tensors):
        raise _refuse(f"optimizer/{len(params)}/*", f"is past this network's {len(params)}")
    size = torch.get_rng_state().numel()
    if tensors["rng/torch"].shape != (size,):
        raise _refuse("rng/torch", f"is not torch's random state of {size} bytes")
    obs = tensors["last_obs"]
    if obs.shape != (venv.num_envs, *venv.observation_space.shape):
        raise _refuse("last_obs", f"has shape {obs.shape}, not these envs' observations")
    if tensors["last_episode_starts"].shape != (venv.num_envs,):
        raise _refuse("last_episode_starts", f"does not hold one flag per env ({venv.num_envs})")
