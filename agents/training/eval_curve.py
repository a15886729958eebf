"""The evaluation curve of a training run, for any pipeline: evaluate a policy against
``greedy`` and ``random`` on duplicate deals at intervals, append the figures (win rates with
95% Wilson intervals) to a CSV log and draw the PNG.

``train.py`` uses it; so can any other training loop, since it imports neither
stable-baselines3 nor a learning library: the policy is a model file (``.safetensors``, e.g.
written by :func:`agents.training.export.export_mlp`), any agent spec, or a plain callable
``policy(observation, action_mask) -> action``.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.training.curve import plot_curve
from agents.training.log import append_row

EVAL_COLUMNS = (
    "eval_opponent",
    "eval_games",
    "eval_win_rate",
    "eval_ci_low",
    "eval_ci_high",
    "random_games",
    "random_win_rate",
    "random_ci_low",
    "random_ci_high",
    "eval_seconds",
)
# eval_*: against greedy; random_*: against random.
OPPONENT_PREFIXES = (("greedy", "eval"), ("random", "random"))
_callables = itertools.count()


def rules_of(rules: Any) -> Any:
    from trash_env.rules import Rules

    if rules is None:
        return Rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, dict):
        return Rules.from_options(**rules)
    raise ValueError(f"rules must be a Rules or a dict of rules options, got {rules!r}")


def policy_spec(policy: Any) -> str:
    """The agent spec that plays ``policy``: a path or spec as is; a callable
    ``(observation, action_mask) -> action`` registered under a fresh name (this process
    only, so evaluate it with one worker)."""
    if isinstance(policy, (str, Path)):
        return str(policy)
    if not callable(policy):
        raise ValueError(
            f"policy must be a model path, an agent spec or a callable "
            f"(observation, action_mask) -> action, got {policy!r}"
        )
    from trash_env.agent import Agent, register_agent

    class CallableAgent(Agent):
        name = f"callable_policy_{next(_callables)}"

        def act(self, observation: Any, action_mask: np.ndarray, view: Any) -> int:
            return int(policy(observation, action_mask))

    register_agent(CallableAgent.name, CallableAgent)
    return CallableAgent.name


def require_one_worker(policy: Any, workers: int) -> None:
    """A callable policy lives in this process: ``ValueError`` unless ``workers`` is 1."""
    if not isinstance(policy, (str, Path)) and workers != 1:
        raise ValueError(
            "workers must be 1 for a callable policy (it lives in this process); "
            "export it to a model file to use more"
        )


def evaluate_vs(
    policy: Any, opponent: str, deals: int, seed: int, rules: Any = None, workers: int = 1
) -> dict[str, Any]:
    """``policy``'s figures against ``opponent`` on ``deals`` duplicate deals (seats rotated,
    agents/evaluation.py): games, wins, win_rate and its 95% Wilson interval ``ci95``, over
    the games where the policy holds one seat and copies of ``opponent`` the others (with
    two players: every game); its par is ``1 / players``. Only that line-up is played
    (``evaluate.py --one-seat``)."""
    from agents.evaluation import evaluate
    from agents.evaluation.sizes import agent_figures

    require_one_worker(policy, workers)
    spec = policy_spec(policy)
    report = evaluate(
        [spec, opponent],
        rules=rules_of(rules),
        deals=deals,
        seed=seed,
        workers=workers,
        one_seat=True,
    )
    return agent_figures(report, spec)


def evaluation_columns(
    policy: Any, deals: int, seed: int, rules: Any = None, workers: int = 1
) -> dict[str, Any]:
    """The :data:`EVAL_COLUMNS` of one log row: ``policy`` against greedy and random."""
    started = time.perf_counter()
    row: dict[str, Any] = {"eval_opponent": "greedy"}
    require_one_worker(policy, workers)
    spec = policy_spec(policy)  # a callable registered once for both opponents
    for opponent, prefix in OPPONENT_PREFIXES:
        figures = evaluate_vs(spec, opponent, deals, seed, rules, workers)
        row.update(
            {
                f"{prefix}_games": figures["games"],
                f"{prefix}_win_rate": round(figures["win_rate"], 4),
                f"{prefix}_ci_low": round(figures["ci95"][0], 4),
                f"{prefix}_ci_high": round(figures["ci95"][1], 4),
            }
        )
    row["eval_seconds"] = round(time.perf_counter() - started, 1)
    return {name: row[name] for name in EVAL_COLUMNS}


class EvaluationCurve:
    """The evaluation log of one run: ``record(steps, policy)`` evaluates and appends a row
    (``timesteps`` then :data:`EVAL_COLUMNS`, then any ``extra`` columns) to ``csv_path``;
    ``plot()`` draws ``png_path`` from it. Each evaluation's seed is ``seed + steps``, as in
    ``train.py``: every point plays its own deals, and a rerun plays the same ones."""

    def __init__(
        self,
        csv_path: str | Path,
        png_path: str | Path | None = None,
        rules: Any = None,
        deals: int = 200,
        seed: int = 0,
        workers: int = 1,
        title: str | None = None,
    ) -> None:
        self.csv_path = Path(csv_path)
        self.png_path = (
            Path(png_path) if png_path is not None else self.csv_path.with_suffix(".png")
        )
        self.rules = rules_of(rules)
        if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
            raise ValueError(f"deals must be a positive integer, got {deals!r}")
        self.deals, self.seed, self.workers = int(deals), int(seed), int(workers)
        self._callables: list[tuple[Any, str]] = []
        self.title = title or f"{self.csv_path.stem}: {self.rules.num_players} players"

    def record(
        self, steps: int, policy: Any, deals: int | None = None, **extra: Any
    ) -> dict[str, Any]:
        """Evaluate ``policy`` at ``steps`` on ``deals`` duplicate deals per opponent (the
        curve's own number when None; a run's final point may play more) and append its row;
        returns the row. A callable is registered as an agent once, however many points it
        is recorded at."""
        if not isinstance(policy, (str, Path)):
            require_one_worker(policy, self.workers)
            known = next((spec for f, spec in self._callables if f is policy), None)
            if known is None:
                known = policy_spec(policy)
                self._callables.append((policy, known))
            policy = known
        row = {
            "timesteps": int(steps),
            **evaluation_columns(
                policy,
                self.deals if deals is None else int(deals),
                self.seed + int(steps),
                self.rules,
                self.workers,
            ),
            **extra,
        }
        append_row(self.csv_path, row)
        return row

    def plot(self) -> Path | None:
        """The PNG of the rows so far (None when there is none)."""
        if not self.csv_path.exists():
            return None
        return plot_curve(
            self.csv_path, self.png_path, self.title, par=1.0 / self.rules.num_players
        )
