"""A run's CSV log (one row per log point, columns in a fixed order) and the training
episodes' figures its rows report."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

# The training columns of train.py's log; the evaluation columns follow
# (agents.training.eval_curve.EVAL_COLUMNS).
TRAIN_COLUMNS = (
    "timesteps",
    "seconds",
    "steps_per_s",
    "interval_steps_per_s",
    "episodes",
    "train_win_rate",
    "train_mean_reward",
    "train_mean_shaping",
    "shaping_coef",
)


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


class EpisodeStats:
    """The training episodes' figures since the last log row."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.episodes = 0
        self.wins = 0
        self.reward_sum = 0.0  # the true reward
        self.shaping_sum = 0.0

    def add(self, info: dict[str, Any]) -> None:
        episode = info.get("episode", {})
        self.episodes += 1
        self.wins += bool(info.get("won"))
        self.reward_sum += float(episode.get("r", 0.0))
        self.shaping_sum += float(episode.get("shaping", 0.0))
