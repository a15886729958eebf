"""One agent against each opponent in every setting a game offers: whole games, then one-round
games at each start size. ``python evaluate.py --agents pretrained greedy random --sizes``.

Why: a policy trained on one setting can collapse in another (a model trained on 10-card deals
only loses to ``random`` in whole games), and one win rate over whole games hides how it plays
the short deals near the end of a game. Each row of the table is one setting; each cell is the
agent's win rate against one opponent, with its 95% Wilson interval, from
:func:`agents.evaluation.evaluate` (duplicate deals, seats rotated, same ``seed`` for every
cell of a row, so every cell of a row plays the same decks).

With more than two players a cell seats the agent with ``num_players - 1`` copies of the
opponent and counts the agent's seat only: its par (the rate among equals) is
``1 / num_players``. The evaluation plays that one line-up only, each seat in turn
(``evaluate(..., one_seat=True)``, ``evaluate.py --one-seat``).

The reference (``greedy`` by default) is played against the same opponents on the same deals,
so each row also says how clearly the reference beats them: the targets of the table are that
the agent's interval against the reference reaches par, and that against every other opponent
it reaches the reference's own rate there (``checks`` in the JSON, ``target`` in the table).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agents.evaluation.report import Report
from agents.evaluation.runner import evaluate
from agents.evaluation.scoring import one_seat_figures
from trash_env.files import atomic_write_csv, atomic_write_text
from trash_env.rules import Rules

NUM_SIZES = 10  # layout slots: start sizes 1 to 10
DEFAULT_REFERENCE = "greedy"


@dataclass
class SizeRow:
    """One setting: whole games (``episode == "game"``) or one-round games at ``start_size``;
    ``cells[opponent]`` the agent's figures, ``reference[opponent]`` the reference's."""

    episode: str
    start_size: int
    rules: Rules
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)
    reference: dict[str, dict[str, Any]] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if self.episode == "game":
            return f"whole game ({self.start_size})"
        return f"round, size {self.start_size}"


@dataclass
class SizesReport:
    """Every row of a per-size evaluation (see the module docstring)."""

    agent: str
    opponents: list[str]
    reference: str | None
    rules: Rules
    seed: int
    deals: int | None
    games: int | None
    rows: list[SizeRow]

    @property
    def par(self) -> float:
        return 1.0 / self.rules.num_players

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "trash_env.evaluate_sizes/1",
            "agent": self.agent,
            "opponents": self.opponents,
            "reference": self.reference,
            "num_players": self.rules.num_players,
            "par": self.par,
            "seed": self.seed,
            "deals_per_setting": self.deals,
            "games_per_setting": self.games,
            "rows": [
                {
                    "setting": row.label,
                    "episode": row.episode,
                    "start_size": row.start_size,
                    "rules": row.rules.to_dict(),
                    "agent": row.cells,
                    "reference": row.reference,
                    "checks": row.checks,
                }
                for row in self.rows
            ],
        }

    def write_json(self, path: str | Path) -> None:
        """The report as JSON, written atomically (temp file + rename)."""
        atomic_write_text(path, json.dumps(self.to_json(), indent=2) + "\n")

    def write_csv(self, path: str | Path) -> None:
        """One line per setting and (player, opponent) pair; written atomically."""
        header = [
            "setting",
            "episode",
            "start_size",
            "player",
            "opponent",
            "games",
            "wins",
            "win_rate",
            "ci95_low",
            "ci95_high",
            "par",
        ]
        rows: list[list[object]] = []
        for row in self.rows:
            for who, cells in ((self.agent, row.cells), (self.reference, row.reference)):
                for opponent, cell in cells.items():
                    rows.append(
                        [
                            row.label,
                            row.episode,
                            row.start_size,
                            who,
                            opponent,
                            cell["games"],
                            cell["wins"],
                            cell["win_rate"],
                            cell["ci95"][0],
                            cell["ci95"][1],
                            self.par,
                        ]
                    )
        atomic_write_csv(path, header, rows)

    def table(self) -> str:
        """The rows as a text table: the agent's rate against each opponent, then the
        reference's against the others, then whether the row meets the targets."""
        cell_width = 22
        head = [f"{'setting':<18}"]
        head += [f"{'vs ' + o:<{cell_width}}" for o in self.opponents]
        ref_opponents = list(self.rows[0].reference) if self.rows else []
        head += [f"{f'{self.reference} vs {o}':<{cell_width}}" for o in ref_opponents]
        head.append("target")
        lines = [
            f"{self.agent}: {self.rules.num_players} players, "
            + (f"{self.deals} duplicate deals" if self.deals else f"{self.games} games")
            + f" per setting, seed {self.seed}; win rate [95% interval], par {self.par:.2f}",
            "".join(head).rstrip(),
        ]
        for row in self.rows:
            parts = [f"{row.label:<18}"]
            for cells, opponents in ((row.cells, self.opponents), (row.reference, ref_opponents)):
                for o in opponents:
                    c = cells[o]
                    text = f"{c['win_rate']:.3f} [{c['ci95'][0]:.3f}, {c['ci95'][1]:.3f}]"
                    parts.append(f"{text:<{cell_width}}")
            missed = [name for name, ok in row.checks.items() if not ok]
            parts.append(
                "-" if not row.checks else "ok" if not missed else "MISSED " + ", ".join(missed)
            )
            lines.append("".join(parts).rstrip())
        return "\n".join(lines)


def settings(
    rules: Rules, sizes: Sequence[int] | None = None, whole_game: bool = True
) -> list[tuple[str, int, Rules]]:
    """The (episode, start size, rules) of each row: whole games at ``rules.start_size``, then
    one-round games at each of ``sizes`` (default: 1 to 10 above ``rules.target_size``)."""
    if sizes is None:
        sizes = list(range(rules.target_size + 1, NUM_SIZES + 1))
    sizes = list(sizes)
    if not sizes and not whole_game:
        raise ValueError("sizes: give at least one start size or the whole-game row")
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= NUM_SIZES:
            raise ValueError(
                f"sizes: start sizes must be integers from 1 to {NUM_SIZES}, got {size!r}"
            )
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes: each start size once, got {sizes}")
    out = []
    if whole_game:
        out.append(("game", rules.start_size, replace(rules, episode="game")))
    for size in sizes:
        try:
            row_rules = Rules.from_options(
                **{**rules.to_dict(), "episode": "round", "start_size": size}
            )
        except ValueError as error:
            raise ValueError(
                f"sizes: start size {size} does not fit these rules: {error}"
            ) from None
        out.append(("round", size, row_rules))
    return out


def agent_figures(report: Report, spec: str) -> dict[str, Any]:
    """``spec``'s games, wins, win rate and 95% interval in the games where it holds one seat
    (with two players: all of them); its par is ``1 / num_players``
    (:func:`agents.evaluation.scoring.one_seat_figures`, its four counts)."""
    figures = one_seat_figures(report, spec)
    return {key: figures[key] for key in ("games", "wins", "win_rate", "ci95")}


def evaluate_sizes(
    agent: str,
    opponents: Sequence[str],
    rules: Rules | None = None,
    *,
    sizes: Sequence[int] | None = None,
    whole_game: bool = True,
    reference: str | None = DEFAULT_REFERENCE,
    deals: int | None = None,
    games: int | None = 1000,
    seed: int = 0,
    workers: int = 1,
    seatings: str = "rotations",
    backend: str = "local",
    progress: bool = False,
) -> SizesReport:
    """``agent`` against each of ``opponents`` in every setting of :func:`settings`, and
    ``reference`` against the other opponents on the same deals (``None``: no reference).
    ``deals`` (or ``games``) per setting and opponent; ``seed`` the master seed of every row."""
    rules = rules if rules is not None else Rules()
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a trash_env.rules.Rules, got {type(rules).__name__}")
    opponents = list(opponents)
    if not opponents:
        raise ValueError("opponents: give at least one opponent to evaluate the agent against")
    if agent in opponents:
        raise ValueError(f"opponents: the agent {agent!r} cannot be its own opponent")
    if len(set(opponents)) != len(opponents):
        raise ValueError(f"opponents: each spec once, got {' '.join(opponents)}")
    if reference == agent:
        reference = None
    rows = settings(rules, sizes, whole_game)
    par = 1.0 / rules.num_players
    report = SizesReport(
        agent=agent,
        opponents=opponents,
        reference=reference,
        rules=rules,
        seed=seed,
        deals=deals,
        games=None if deals else games,
        rows=[],
    )
    for episode, size, row_rules in rows:
        row = SizeRow(episode=episode, start_size=size, rules=row_rules)
        pairs = [(agent, o, row.cells) for o in opponents]
        if reference is not None:
            pairs += [(reference, o, row.reference) for o in opponents if o != reference]
        for player, opponent, cells in pairs:
            played = evaluate(
                [player, opponent],
                row_rules,
                games=games,
                deals=deals,
                seed=seed,
                workers=workers,
                seatings=seatings,
                backend=backend,
                one_seat=True,
            )
            cells[opponent] = agent_figures(played, player)
        for o in opponents:
            high = row.cells[o]["ci95"][1]
            if o == reference:
                row.checks[f"vs {o} reaches par"] = high >= par
            elif o in row.reference:
                row.checks[f"vs {o} reaches {reference}"] = high >= row.reference[o]["win_rate"]
        report.rows.append(row)
        if progress:
            print(f"evaluate --sizes: {row.label} done", file=sys.stderr, flush=True)
    return report
