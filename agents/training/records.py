"""A run's records made whole again when it starts or resumes after a kill: the CSV log cut
back to the checkpoint's step, the ``.json`` sidecar copies rewritten from their models, and
the temp files of interrupted writes removed.

Why the copies: a model file holds its sidecar in its metadata and is replaced by one atomic
rename; the ``.json`` beside it, a readable copy renamed a moment later, may be another step's
after a kill. Loaders read the embedded sidecar; a run rewrites every copy that differs.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from agents.training.config import MODEL_SUFFIX


def model_files(run_dir: Path, stem: str) -> list[Path]:
    """The model files a run at ``run_dir/stem.safetensors`` writes: the model, its
    checkpoints' policies and its self-play pool."""
    found = [run_dir / f"{stem}{MODEL_SUFFIX}"]
    for kind in ("checkpoints", "pool"):
        found += sorted((run_dir / f"{stem}_{kind}").glob(f"*{MODEL_SUFFIX}"))
    return [path for path in found if path.is_file()]


def repair_sidecar_copy(model: Path) -> bool:
    """Rewrite ``model``'s ``.json`` copy from the sidecar inside the model when they differ
    (or the copy is missing); True when it was rewritten. A model that does not load is left
    alone (its readers refuse it)."""
    from safetensors import safe_open

    from agents.policies.model_file import METADATA_KEY, read_sidecar, sidecar_path
    from trash_env.files import atomic_write_text

    try:
        read_sidecar(model)  # bounded and checked before the metadata is read in full
        with safe_open(str(model), "np") as handle:
            text = (handle.metadata() or {})[METADATA_KEY]
    except (ValueError, OSError, KeyError):
        return False
    try:
        if sidecar_path(model).read_bytes() == text.encode("utf-8"):
            return False
    except OSError:
        pass
    atomic_write_text(sidecar_path(model), text)
    return True


def remove_temp_files(run_dir: Path, stem: str) -> int:
    """Remove the temp files (``.NAME.*.tmp``, trash_env.files.atomic_write_bytes) of writes
    a kill interrupted: those of the run's own files beside ``--out``, and every one in its
    checkpoints and pool folders; returns how many."""
    from trash_env.files import sweep_temp_files

    own = (MODEL_SUFFIX, ".json", "_log.csv", "_curve.png")
    removed = sweep_temp_files(run_dir, "|".join(re.escape(stem + end) for end in own))
    return removed + sum(
        sweep_temp_files(run_dir / f"{stem}_{k}", ".+") for k in ("checkpoints", "pool")
    )


def cut_log(csv_path: Path, step: int) -> int | None:
    """Drop the log rows after ``step`` (written by a run killed after its checkpoint of
    ``step``), so that the resumed run writes each later step once; returns the last step
    kept (None: no row). Rows that do not parse are dropped too."""
    from trash_env.files import atomic_write_text

    if not csv_path.is_file():
        return None
    with csv_path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.DictReader(handle)
        rows = [(row, row.get("timesteps") or "") for row in reader]
    kept = [(row, int(s)) for row, s in rows if s.isdecimal() and int(s) <= step]
    if reader.fieldnames and len(kept) != len(rows):
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=reader.fieldnames, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(row for row, _ in kept)
        atomic_write_text(csv_path, buffer.getvalue())
    return kept[-1][1] if kept else None
