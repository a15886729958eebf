"""A run's records made whole again when it starts or resumes after a kill: the CSV log cut
back to the checkpoint's step, the ``.json`` sidecar copies rewritten from their models, and
the temp files of interrupted writes removed.

Why this design: a model file holds its sidecar in its own metadata and is replaced by one
atomic rename, so it always describes itself; the ``.json`` beside it is a readable copy,
renamed a moment later. A kill between the two renames leaves a copy of another step's
sidecar: rather than teach every reader to distrust the copy, a run rewrites every copy that
differs from its model's own sidecar before it does anything else (loaders read the
embedded one).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from agents.training.config import MODEL_SUFFIX


def model_files(run_dir: Path, stem: str) -> list[Path]:
    """The model files a run at ``run_dir/stem.safetensors`` writes: the model, its
    checkpoints' policies and its self-play pool."""
    found = [run_dir / f"{stem}{MODEL_SUFFIX}"]
    for kind in ("checkpoints", "pool"):
        folder = run_dir / f"{stem}_{kind}"
        if folder.is_dir():
            found += sorted(folder.glob(f"*{MODEL_SUFFIX}"))
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
    copy = sidecar_path(model)
    try:
        if copy.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    atomic_write_text(copy, text)
    return True


def remove_temp_files(run_dir: Path, stem: str) -> list[Path]:
    """Remove the temp files (``.NAME.*.tmp``, trash_env.cli.atomic_write_bytes) of writes
    a kill interrupted: those of the run's own files beside ``--out``, and every one in its
    checkpoints and pool folders."""
    names = (f"{stem}{MODEL_SUFFIX}", f"{stem}.json", f"{stem}_log.csv", f"{stem}_curve.png")
    stale = [p for name in names for p in run_dir.glob(f".{name}.*.tmp")]
    for kind in ("checkpoints", "pool"):
        folder = run_dir / f"{stem}_{kind}"
        if folder.is_dir():
            stale += folder.glob(".*.tmp")
    removed = []
    for path in stale:
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass
    return removed


def cut_log(csv_path: Path, step: int) -> int | None:
    """Drop the log rows after ``step`` (written by a run killed after its checkpoint of
    ``step``), so that the resumed run writes each later step once; returns the last step
    kept (None: no row). Rows that do not parse are dropped too."""
    from trash_env.files import atomic_write_text

    if not csv_path.is_file():
        return None
    with csv_path.open(newline="", encoding="utf-8", errors="replace") as handle:
        reader = csv.DictReader(handle)
        fields = reader.fieldnames
        rows = list(reader)
    if not fields:
        return None

    def step_of(row: dict) -> int | None:
        try:
            return int(row.get("timesteps") or "")
        except ValueError:
            return None

    kept = [row for row in rows if (s := step_of(row)) is not None and s <= step]
    if len(kept) != len(rows):
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(kept)
        atomic_write_text(csv_path, buffer.getvalue())
    return step_of(kept[-1]) if kept else None
