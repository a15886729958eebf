"""A run's CSV log: one row per log point, columns in a fixed order."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

# The training columns of train.py's log; the evaluation columns follow
# (agents.training.eval_curve.EVAL_COLUMNS).
TRAIN_COLUMNS = ("timesteps", "seconds", "steps_per_s", "interval_steps_per_s", "episodes",
                 "train_win_rate", "train_mean_reward", "train_mean_shaping", "shaping_coef")


def append_row(csv_path: Path, row: dict[str, Any]) -> None:
    """Append ``row`` to the CSV log, with a header line when the file is new."""
    csv_path = Path(csv_path)
    new = not csv_path.exists()
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
