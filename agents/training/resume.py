"""What a resumed run is checked against before any work: the checkpoint's flags, its envs,
its step, and the run it continues (a resume writes into that run alone, never another's)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agents.training.config import FLAGS_ADDED, RESUME_FLAGS, TrainConfig, decided, flag, settle


def check_resume_flags(config: TrainConfig, saved: dict[str, Any]) -> None:
    """A resumed run reproduces the uninterrupted one only with the same training flags."""
    given = config.resume_flags()
    saved = {**FLAGS_ADDED, **saved}
    differ = [name for name in RESUME_FLAGS if name in saved and saved[name] != given[name]]
    if differ:
        shown = "; ".join(f"{flag(n)} {saved[n]!r} (given {given[n]!r})" for n in differ)
        raise ValueError(
            f"--resume: the checkpoint was trained with other flags: {shown}; "
            "give the checkpoint's values"
        )


def run_files(out: Path) -> list[Path]:
    """What a run at ``out`` has written there: the model and its sidecar copy, the log, the
    curve, and its checkpoints and pool folders (when they hold anything)."""
    stem = out.parent / out.stem
    files = [out, out.with_suffix(".json"), Path(f"{stem}_log.csv"), Path(f"{stem}_curve.png")]
    folders = [Path(f"{stem}_checkpoints"), Path(f"{stem}_pool")]
    return [p for p in files if os.path.lexists(p)] + [
        p for p in folders if p.is_dir() and any(p.iterdir())
    ]


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_own_run(out: Path, checkpoint: Path) -> None:
    """A resume writes into the run ``checkpoint`` belongs to (``DIR/NAME_checkpoints`` is
    the run ``DIR/NAME.safetensors``) or into a new one; ``ValueError`` when ``out`` holds
    another run's files, which the resumed run would cut, append to and replace."""
    from trash_env.files import safe_text

    own = checkpoint.parent
    if _same_folder(out.parent / f"{out.stem}_checkpoints", own):
        return
    found = run_files(out)
    if found:
        names = ", ".join(p.name for p in found[:4])
        raise ValueError(
            f"--out {safe_text(str(out))!r} holds another run ({safe_text(names)}), not the one "
            f"of the checkpoint {safe_text(str(checkpoint))!r}: a resume writes into its own run "
            "(leave --out out) or a new --out, never over another run"
        )


def prepare(config: TrainConfig) -> tuple[TrainConfig, dict[str, Any] | None]:
    """Everything checked before any work: the checkpoint of ``config.resume`` read and
    validated, the config settled (:func:`~agents.training.config.settle`, taking the
    checkpoint's values where none is given) and checked against the checkpoint, and the run
    it writes into its own. Returns the settled config and the checkpoint's state (None
    without ``resume``); ``ValueError``."""
    from agents.training.checkpoint import find_checkpoint

    state = find_checkpoint(config.resume) if config.resume is not None else None
    config = settle(config, state["flags"] if state is not None else None)
    if state is not None:
        check_own_run(config.out_path, Path(state["path"]))
        check_resume_flags(config, state["flags"])
        if config.vec != "batched" and len(state["envs"]) != config.envs:
            raise ValueError(
                f"--resume: the checkpoint holds {len(state['envs'])} envs, --envs is {config.envs}"
            )
        if int(state["timesteps"]) > decided(config.timesteps, "timesteps"):
            raise ValueError(
                f"--timesteps {config.timesteps} is below the checkpoint's step "
                f"{state['timesteps']}"
            )
    return config, state
