"""The learning-curve PNG drawn from a run's CSV log."""

from __future__ import annotations

import csv
import io
from pathlib import Path


def plot_curve(csv_path: Path, png_path: Path, title: str, par: float = 0.5) -> Path | None:
    """The learning curve from the CSV log, against the learner steps, in up to three panels: the
    periodic win rates against ``greedy`` and ``random`` with their 95% Wilson bands and the
    par line (``par``, 1 / players); the training episodes' mean true reward (and the
    shaping's mean per episode, when shaped); the training throughput (steps/s between two
    log rows, evaluations left out); a panel the log has no figures for is left out. None when
    the log has no row."""
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

    has_reward = any(r.get("train_mean_reward") for r in rows)
    has_speed = any(r.get("interval_steps_per_s") for r in rows)
    # Panels without figures are left out (a pipeline example logs no training episodes).
    ratios = [2] + [1] * (has_reward + has_speed)
    fig, axes = plt.subplots(
        len(ratios),
        1,
        figsize=(7.5, 4.5 + 2 * (len(ratios) - 1)),
        sharex=True,
        gridspec_kw={"height_ratios": ratios},
        squeeze=False,
    )
    ax_win = axes[0][0]
    ax_reward = axes[1][0] if has_reward else None
    ax_speed = axes[-1][0] if has_speed else None
    for prefix, label, color in (("eval", "greedy", "C0"), ("random", "random", "C1")):
        evaluated = [r for r in rows if r.get(f"{prefix}_win_rate")]
        if not evaluated:
            continue
        steps, rate = series(f"{prefix}_win_rate", evaluated)
        _, low = series(f"{prefix}_ci_low", evaluated)
        _, high = series(f"{prefix}_ci_high", evaluated)
        sizes = [r.get(f"{prefix}_games", "") for r in evaluated]
        games = (
            f"{sizes[-1]} games each"
            if len(set(sizes)) == 1
            else f"{sizes[0]} games a point, {sizes[-1]} at the last"
        )
        ax_win.fill_between(steps, low, high, color=color, alpha=0.2)
        ax_win.plot(
            steps,
            rate,
            marker="o",
            markersize=3,
            color=color,
            label=f"vs {label} ({games}, 95% Wilson band)",
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
    if ax_reward is not None:
        steps, reward = series("train_mean_reward", rows)
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
        ax_reward.legend(loc="lower right", fontsize=8)
    if ax_speed is not None:
        steps, speed = series("interval_steps_per_s", rows)
        ax_speed.plot(steps, speed, color="C4", marker=".")
        ax_speed.set_ylabel("training steps/s")
        ax_speed.set_ylim(bottom=0)
    axes[-1][0].set_xlabel("learner steps")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    from trash_env.files import atomic_write_bytes

    atomic_write_bytes(png_path, buffer.getvalue())
    return Path(png_path)
