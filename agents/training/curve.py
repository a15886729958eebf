"""The learning-curve PNG drawn from a run's CSV log."""

from __future__ import annotations

import csv
import io
from pathlib import Path


def plot_curve(csv_path: Path, png_path: Path, title: str, par: float = 0.5) -> Path | None:
    """The learning curve from the CSV log, against the learner steps, in three panels: the
    periodic win rates against ``greedy`` and ``random`` with their 95% Wilson bands and the
    par line (``par``, 1 / players); the training episodes' mean true reward (and the
    shaping's mean per episode, when shaped); the training throughput (steps/s between two
    log rows, evaluations left out). None when the log has no row."""
    with Path(csv_path).open() as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("timesteps")]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(key: str, subset: list[dict[str, str]]) -> tuple[list[int], list[float]]:
        pairs = [(int(r["timesteps"]), float(r[key])) for r in subset if r.get(key)]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    fig, (ax_win, ax_reward, ax_speed) = plt.subplots(
        3, 1, figsize=(7.5, 8.5), sharex=True, gridspec_kw={"height_ratios": [2, 1, 1]}
    )
    for prefix, label, color in (("eval", "greedy", "C0"), ("random", "random", "C1")):
        evaluated = [r for r in rows if r.get(f"{prefix}_win_rate")]
        if not evaluated:
            continue
        steps, rate = series(f"{prefix}_win_rate", evaluated)
        _, low = series(f"{prefix}_ci_low", evaluated)
        _, high = series(f"{prefix}_ci_high", evaluated)
        games = evaluated[-1].get(f"{prefix}_games", "")
        ax_win.fill_between(steps, low, high, color=color, alpha=0.2)
        ax_win.plot(
            steps,
            rate,
            marker="o",
            markersize=3,
            color=color,
            label=f"vs {label} ({games} games, 95% Wilson band)",
        )
    ax_win.axhline(par, color="grey", linestyle="--", linewidth=1)
    ax_win.text(
        0.0,
        par,
        f" par {par:.3g}",
        color="grey",
        fontsize=8,
        va="bottom",
        transform=ax_win.get_yaxis_transform(),
    )
    ax_win.set_ylabel(
        "win rate (duplicate deals;\none agent seat)" if par < 0.5 else "win rate (duplicate deals)"
    )
    ax_win.set_ylim(0, 1)
    if ax_win.get_legend_handles_labels()[0]:
        ax_win.legend(loc="lower right", fontsize=8)
    else:
        ax_win.text(
            0.5,
            0.5,
            "no periodic evaluation (--eval-every 0)",
            ha="center",
            transform=ax_win.transAxes,
        )
    ax_win.set_title(title)
    steps, reward = series("train_mean_reward", rows)
    if steps:
        ax_reward.plot(steps, reward, color="C2", label="true reward (zero-sum result)")
    steps_s, shaping = series("train_mean_shaping", rows)
    if any(shaping):
        ax_reward.plot(
            steps_s,
            shaping,
            color="C3",
            linestyle=":",
            label="shaping added in training (not in the true reward)",
        )
    ax_reward.axhline(0.0, color="grey", linewidth=0.5)
    ax_reward.set_ylabel("mean per training\nepisode")
    if ax_reward.get_legend_handles_labels()[0]:
        ax_reward.legend(loc="lower right", fontsize=8)
    steps, speed = series("interval_steps_per_s", rows)
    if steps:
        ax_speed.plot(steps, speed, color="C4", marker=".")
    ax_speed.set_ylabel("training steps/s")
    ax_speed.set_ylim(bottom=0)
    ax_speed.set_xlabel("learner steps")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    from trash_env.files import atomic_write_bytes

    atomic_write_bytes(png_path, buffer.getvalue())
    return Path(png_path)
