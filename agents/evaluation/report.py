"""The report of a tournament: :class:`Report` holds every figure (filled by
:func:`agents.evaluation.scoring.summarise`) and writes it as a text table, JSON, CSV or a PNG plot.
Files are written atomically."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from trash_env.files import atomic_write_bytes, atomic_write_csv, atomic_write_text, safe_text
from trash_env.rules import Rules

if TYPE_CHECKING:
    from agents.evaluation.tournament import GameResult


@dataclass
class Report:
    """Every figure of a tournament. ``to_json()`` gives a plain dict (see :func:`evaluate`)."""

    specs: list[str]
    rules: Rules
    seed: int
    seatings: str
    lineups: list[tuple[str, ...]]
    deals: int
    games: int = 0
    agents: dict[str, dict] = field(default_factory=dict)
    pairs: dict[str, dict] = field(default_factory=dict)
    seats: list[dict] = field(default_factory=list)
    first_seat: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    # Per spec: (games, wins) of the games where it held exactly one seat
    # (agents/evaluation/sizes.py).
    single_seat: dict[str, tuple[int, float]] = field(default_factory=dict, repr=False)
    # Every game's result in deal order, kept only when asked (evaluate(keep_results=True)).
    results: list[GameResult] | None = field(default=None, repr=False)
    # With evaluate(save_games=DIR): {"dir": DIR as given, "index": [one entry per game]}.
    saved_games: dict | None = field(default=None, repr=False)
    # The engine that played the games and why (agents/evaluation/batched.py: engine_for).
    engine: str = ""
    # With evaluate(one_seat=True): the first spec's figures in its one seat against copies
    # of the second (scoring.one_seat_figures), shown in the table and the JSON.
    one_seat: dict | None = None

    def head_to_head(self, a: str, b: str) -> dict | None:
        return self.pairs.get(f"{a} vs {b}")

    def to_json(self) -> dict:
        """A JSON-ready dict: the settings, ``agents[spec]`` (games, wins, win_rate, ci95, ...),
        ``pairs["A vs B"]``, ``seats``, ``first_seat`` and the game ``summary``. With saved
        games, ``games`` is ``{"count": N, "dir": DIR, "index": [{"file", "specs",
        "deal_seed", "winners"}, ...]}`` instead of the count ``N``."""
        data = {
            "format": "trash_env.evaluate/1",
            "agents_order": self.specs,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "seatings": self.seatings,
            "lineups": [list(x) for x in self.lineups],
            "deals": self.deals,
            "games": self.games,
            "games_per_deal": self.games // self.deals if self.deals else 0,
            "par": 1.0 / self.rules.num_players,
            "agents": self.agents,
            "pairs": self.pairs,
            "seats": self.seats,
            "first_seat": self.first_seat,
            "summary": self.summary,
            "engine": self.engine,
        }
        if self.one_seat is not None:
            data["one_seat"] = self.one_seat
        if self.saved_games is not None:
            data["games"] = {"count": self.games, **self.saved_games}
        return data

    def write_json(self, path: str | Path) -> None:
        """The report as JSON, written atomically (temp file + rename)."""
        atomic_write_text(path, json.dumps(self.to_json(), indent=2) + "\n")

    def write_csv(self, path: str | Path) -> None:
        """One row per agent, then one row per ordered pair (column ``kind`` tells which);
        written atomically."""
        header = [
            "kind",
            "agent",
            "opponent",
            "games",
            "wins",
            "rate",
            "ci95_low",
            "ci95_high",
            "mean_placing",
            "mean_return",
            "rating_mu",
            "rating_sigma",
        ]
        rows: list[list[object]] = []
        for spec, a in self.agents.items():
            rows.append(
                [
                    "agent",
                    spec,
                    "",
                    a["games"],
                    a["wins"],
                    a["win_rate"],
                    a["ci95"][0],
                    a["ci95"][1],
                    a["mean_placing"],
                    a["mean_return"],
                    a["rating"]["mu"],
                    a["rating"]["sigma"],
                ]
            )
        for pair in self.pairs.values():
            rows.append(
                [
                    "pair",
                    pair["agent"],
                    pair["opponent"],
                    pair["comparisons"],
                    pair["wins"],
                    pair["rate"],
                    pair["ci95"][0],
                    pair["ci95"][1],
                    "",
                    "",
                    "",
                    "",
                ]
            )
        atomic_write_csv(path, header, rows)

    def table(self) -> str:
        """The report as text: settings, per-agent table, head-to-head, seats and game lengths."""
        r = self.rules
        s = self.summary
        lines = [
            f"{self.deals} deals x {self.games // max(1, self.deals)} games per deal = "
            f"{self.games} games; {r.num_players} players, episode={r.episode}, "
            f"{len(self.lineups)} line-up(s), seatings={self.seatings}, seed={self.seed}",
            f"mean rounds per game {s['mean_rounds']:.2f}, mean turns {s['mean_turns']:.1f}, "
            f"truncated {s['truncated']}; par win rate {1 / r.num_players:.3f}",
            "",
        ]
        names = {spec: safe_text(spec) for spec in self.specs}  # paths may hold escapes
        width = max(12, *(len(x) for x in names.values()))
        lines.append(
            f"{'agent':<{width}}  {'games':>7}  {'wins':>9}  {'win rate':>8}  "
            f"{'95% CI':>15}  {'placing':>7}  {'TrueSkill (95%)':>15}  rank"
        )
        for spec in sorted(self.agents, key=lambda x: -self.agents[x]["win_rate"]):
            a = self.agents[spec]
            lo, hi = a["ci95"]
            rating = a["rating"]
            placing = "-" if a["mean_placing"] is None else f"{a['mean_placing']:.2f}"
            lines.append(
                f"{names[spec]:<{width}}  {a['games']:>7}  {a['wins']:>9.1f}  "
                f"{a['win_rate']:>8.3f}  "
                f"[{lo:.3f}, {hi:.3f}]  {placing:>7}  "
                f"{rating['mu']:>7.2f} +- {rating['ci95'][1] - rating['mu']:<5.2f}  "
                f"{rating['rank']}{'=' if rating['tied'] else ''}"
            )
        if self.pairs:
            lines += ["", "head-to-head (row beats column; 95% CI):"]
            for pair in self.pairs.values():
                lo, hi = pair["ci95"]
                lines.append(
                    f"  {names[pair['agent']]} vs {names[pair['opponent']]}: "
                    f"{pair['rate']:.3f} "
                    f"[{lo:.3f}, {hi:.3f}] over {pair['comparisons']} comparisons"
                )
        f = self.first_seat
        lines += [
            "",
            f"first seat (plays first in deal 1): win rate {f['win_rate']:.3f} "
            f"[{f['ci95'][0]:.3f}, {f['ci95'][1]:.3f}] (par {1 / r.num_players:.3f}, "
            f"advantage {f['advantage']:+.3f})",
        ]
        if self.one_seat is not None:
            lines += ["", self.one_seat_line(names)]
        if self.engine:
            lines.append(f"engine: {self.engine}")
        return "\n".join(lines)

    def one_seat_line(self, names: dict[str, str]) -> str:
        """The one-seat figure in words: the share, its interval, par and where par lies."""
        o = self.one_seat
        assert o is not None
        lo, hi = o["ci95"]
        par = o["par"]
        where = (
            "par within the interval"
            if lo <= par <= hi
            else "the interval above par"
            if lo > par
            else "the interval below par"
        )
        copies = self.rules.num_players - 1
        return (
            f"one seat: {names[o['agent']]} against {copies} x {names[o['opponent']]}: "
            f"win rate {o['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] over {o['games']} games, "
            f"par {par:.3f} ({where})"
        )

    def plot(self, path: str | Path) -> None:
        """PNG: win rates with 95% intervals (par as a line) and the head-to-head matrix."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        specs = self.specs
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
        rates = [self.agents[s]["win_rate"] for s in specs]
        lows = [self.agents[s]["win_rate"] - self.agents[s]["ci95"][0] for s in specs]
        highs = [self.agents[s]["ci95"][1] - self.agents[s]["win_rate"] for s in specs]
        left.bar(range(len(specs)), rates, yerr=[lows, highs], capsize=5, color="#4c72b0")
        left.axhline(1.0 / self.rules.num_players, color="grey", linestyle="--", label="par")
        left.set_xticks(range(len(specs)), specs, rotation=20, ha="right")
        left.set_ylabel("win rate (95% CI)")
        left.set_ylim(0, 1)
        left.legend()
        left.set_title(f"{self.rules.num_players} players, {self.games} games")
        matrix = np.full((len(specs), len(specs)), np.nan)
        for i, a in enumerate(specs):
            for j, b in enumerate(specs):
                pair = self.head_to_head(a, b)
                if pair is not None:
                    matrix[i, j] = pair["rate"]
        image = right.imshow(matrix, vmin=0, vmax=1, cmap="RdBu")
        for i in range(len(specs)):
            for j in range(len(specs)):
                if not np.isnan(matrix[i, j]):
                    right.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center")
        right.set_xticks(range(len(specs)), specs, rotation=20, ha="right")
        right.set_yticks(range(len(specs)), specs)
        right.set_title("head-to-head: row beats column")
        fig.colorbar(image, ax=right)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        atomic_write_bytes(path, buffer.getvalue())
