"""What every pipeline example in examples/ shares, so that each script holds only its
library's training loop: the basic flags, the learning curve, the model file and the final
figures.

- :func:`example_parser`: ``--steps`` (the budget, in environment decisions), ``--seed``,
  ``--out PATH.safetensors``, the curve's ``--eval-every``, ``--eval-deals``,
  ``--final-deals`` and ``--eval-workers``, and every rules option as ``train.py`` spells it
  (``--players 3``, ``--wilds kings``: :func:`trash_env.cli.add_rules_arguments`), the same
  in every example; a rules combination the game does not allow is a usage error. An example
  that gives ``observations_for_players`` also gets ``--observation`` (the envs' form,
  :mod:`trash_env.pairs`), chosen by the player count when unset, as ``--steps`` is.
- :class:`PipelineRun`: the one place the rules live (``run.rules``, built from the flags):
  the example builds its envs from :attr:`PipelineRun.env_options`, and the model file and
  the curve's evaluations record and play the same game. At every ``--eval-every``
  decisions, :meth:`PipelineRun.progress` writes the policy as the model file ``--out``
  (:func:`agents.training.export.export_mlp`, atomically: a crash leaves the last evaluated
  model) and evaluates that file against
  ``greedy`` and ``random`` on duplicate deals (:mod:`agents.training.eval_curve`), appending
  a row to ``<stem>_log.csv`` and redrawing ``<stem>_curve.png``. :meth:`PipelineRun.finish`
  does the same once more on ``--final-deals`` deals, writes ``<stem>_summary.json`` (the
  figures, and the wall and CPU seconds of training with the evaluations left out) and prints
  it as the last line of output (one JSON object).

The model file is then an agent like any other: ``python evaluate.py --agents PATH greedy``,
``python -m agents.play --opponents PATH``. Imports neither torch nor a learning library
(the exporter imports torch when called).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

from agents.training.config import FINAL_DEALS
from agents.training.eval_curve import EvaluationCurve
from trash_env.cli import Parser, add_rules_arguments, extra_install, missing_modules, rules_options
from trash_env.files import atomic_write_text, check_output_path
from trash_env.pairs import OBSERVATIONS
from trash_env.rules import Rules

# Evaluation deals are seeded far from any training seed an example uses.
EVAL_SEED = 1_000_000_000
MAX_STEPS = 10**9
MAX_DEALS = 10**6
# the envs' observation form -> what the exported network reads (``network.features``)
FEATURES_OF_OBSERVATION = {"plain": "obs", "pairs": "pairs", "fits": "fits"}


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high``, else a usage error
    naming the flag (argparse adds its name)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:,} to {high:,}, got {value:,}")
        return value

    return parse


def real_number(low: float, high: float, *, low_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type``: a finite number from ``low`` (excluded when ``low_open``) to
    ``high``, else a usage error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        above = value > low if low_open else value >= low
        if not (math.isfinite(value) and above and value <= high):
            side = "above" if low_open else "from"
            raise argparse.ArgumentTypeError(f"must be {side} {low:g} to {high:g}, got {text}")
        return value

    return parse


def example_prog(name: str) -> str:
    """How an example is run, for its usage line: ``python examples/NAME.py``."""
    return f"python examples/{name}.py"


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each flag's default after its help, unless the help already says it or there is none
    to show (``None``: the help says what happens without the flag)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or "(default" in text:
            return text
        return super()._get_help_string(action)


def run_rules(args: argparse.Namespace) -> Rules:
    """The game that the rules flags of :func:`example_parser` describe (``ValueError`` for a
    combination the game does not allow)."""
    return Rules.from_options(**rules_options(args))


class ExampleParser(Parser):
    """An example's parser: the rules flags are checked together once parsed, so a game the
    rules do not allow is a usage error before the library loads (as in ``train.py``); an
    unset ``--steps`` becomes the budget for the game's player count, and an unset
    ``--observation`` the form for it."""

    steps_for_players: dict[int, int] = {}
    default_steps = 0
    observations_for_players: dict[int, str] = {}
    default_observation = "pairs"

    def parse_known_args(self, args=None, namespace=None):
        parsed, rest = super().parse_known_args(args, namespace)
        try:
            rules = run_rules(parsed)
        except ValueError as error:
            self.error(f"rules: {error}")
        if self.steps_for_players and parsed.steps is None:
            parsed.steps = self.steps_for_players.get(rules.num_players, self.default_steps)
        if self.observations_for_players and parsed.observation is None:
            parsed.observation = self.observations_for_players.get(
                rules.num_players, self.default_observation
            )
        return parsed, rest


def example_parser(
    name: str,
    description: str,
    *,
    steps: int,
    eval_every: int,
    steps_for_players: dict[int, int] | None = None,
    observation: str = "pairs",
    observations_for_players: dict[int, str] | None = None,
) -> Parser:
    """The parser of an example with the shared flags and the rules options; the example adds
    its own. ``steps_for_players``: the default ``--steps`` by player count where it is not
    ``steps`` (more players, each decision matters less to the result).
    ``observations_for_players``: adds ``--observation``, by default ``observation`` or the
    form given for the player count (six players need the ``fits`` entries)."""
    parser = ExampleParser(
        prog=example_prog(name),
        description=description,
        formatter_class=_DefaultsFormatter,
    )
    parser.default_steps = steps
    if steps_for_players:
        parser.steps_for_players = dict(steps_for_players)
        parser.epilog = f"--steps defaults to {steps:,}, or by --players: {steps_for_players}."
    if observations_for_players:
        parser.default_observation = observation
        parser.observations_for_players = dict(observations_for_players)
        chosen = f"--observation defaults to {observation}, or by --players: "
        parser.epilog = " ".join(
            filter(None, [parser.epilog, f"{chosen}{observations_for_players}."])
        )
        parser.add_argument(
            "--observation",
            choices=OBSERVATIONS,
            default=None,
            help="the envs' observation form (trash_env/pairs.py); unset: by --players",
        )
    parser.add_argument(
        "--steps",
        type=whole_number(1, MAX_STEPS),
        default=None if steps_for_players else steps,
        help="the budget: environment decisions of training",
    )
    parser.add_argument("--seed", type=whole_number(0, 2**31 - 1), default=0, help="master seed")
    parser.add_argument(
        "--out",
        default=f"runs/{name}/model.safetensors",
        help="the model file written (with its .json sidecar, <stem>_log.csv, "
        "<stem>_curve.png and <stem>_summary.json beside it)",
    )
    parser.add_argument(
        "--eval-every",
        type=whole_number(0, MAX_STEPS),
        default=eval_every,
        help="decisions between learning-curve points (0: the final evaluation only)",
    )
    parser.add_argument(
        "--eval-deals",
        type=whole_number(1, MAX_DEALS),
        default=200,
        help="duplicate deals per opponent at each curve point",
    )
    parser.add_argument(
        "--final-deals",
        type=whole_number(1, MAX_DEALS),
        default=FINAL_DEALS,
        help="duplicate deals per opponent in the final evaluation (about +-0.01 at 5,000)",
    )
    parser.add_argument(
        "--eval-workers",
        type=whole_number(1, 256),
        default=1,
        help="evaluation processes (each re-imports the script: keep 1 for heavy libraries)",
    )
    add_rules_arguments(parser)
    return parser


def check_command_line(
    name: str, parse_args: Callable[[list[str]], object], extra: str, *modules: str
) -> None:
    """What an example does under ``if __name__ == "__main__":`` before it imports its
    library: answer ``--help`` and refuse a bad flag (``parse_args``), then, if one of
    ``modules`` is missing, say in one line which install brings it (``extra``: the project's
    extra, or a whole ``pip install ...`` command) and exit 2, instead of a traceback."""
    parse_args(sys.argv[1:])
    missing = missing_modules(*modules)
    if missing:
        install = extra if extra.startswith("pip ") else extra_install(extra)
        shown = f"{example_prog(name)}: error: needs {', '.join(missing)}, not installed"
        print(f"{shown}: {install}", file=sys.stderr)
        raise SystemExit(2)


def library_version(distribution: str) -> str:
    """The installed version of ``distribution`` (``"not installed"`` when absent)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


class PipelineRun:
    """One example's run: learning curve, model file and final figures (module docstring).

    Args:
        args: the parsed :func:`example_parser` flags.
        name: the example's name (``cleanrl_ppo``, ...), recorded in the files.
        library: the distribution whose algorithm trains (``torchrl``, ``ray``, ...); its
            version is recorded.
        features: what the exported network reads: ``pairs`` when it was trained on the
            envs' ``observation="pairs"``, ``obs`` on the plain observation.

    The rules come from ``args`` alone (:func:`run_rules`): the example builds its envs from
    :attr:`env_options`, so the game trained, the game evaluated and the game the model file
    records are one.
    """

    def __init__(
        self,
        args: argparse.Namespace,
        name: str,
        library: str,
        *,
        features: str = "pairs",
    ) -> None:
        self.out = check_output_path("--out", args.out, (".safetensors",))
        self.args, self.name, self.library, self.features = args, name, library, features
        self.rules = run_rules(args)
        stem = self.out.stem
        self.summary_path = self.out.with_name(f"{stem}_summary.json")
        self.curve = EvaluationCurve(
            self.out.with_name(f"{stem}_log.csv"),
            self.out.with_name(f"{stem}_curve.png"),
            rules=self.rules,
            deals=args.eval_deals,
            seed=EVAL_SEED + args.seed,
            workers=args.eval_workers,
            title=f"{name} ({library}): {self.rules.num_players} players, whole games",
        )
        # A run owns the files at its --out: an earlier run's log would mix two curves.
        self.curve.csv_path.unlink(missing_ok=True)
        self.started, self.started_cpu = time.perf_counter(), time.process_time()
        self.eval_seconds = self.eval_cpu = 0.0  # of the curve's points, not training
        self.last_steps, self.last_training = 0, 0.0
        self.next_point = args.eval_every if args.eval_every > 0 else None

    @property
    def env_options(self) -> dict[str, Any]:
        """Every rules option of this run, as keyword arguments of the envs (``TrashSoloEnv``,
        ``TrashVectorEnv``, the integrations' env makers and RLlib's ``env_config``)."""
        return self.rules.to_dict()

    def _training_columns(self, steps: int, now: float) -> dict[str, Any]:
        """Wall seconds so far, and the training's decisions/s since the last point
        (evaluations left out)."""
        training = now - self.started - self.eval_seconds
        rate = (steps - self.last_steps) / max(training - self.last_training, 1e-9)
        self.last_steps, self.last_training = int(steps), training
        return {"seconds": round(now - self.started, 1), "interval_steps_per_s": round(rate, 1)}

    def export(self, steps: int, actor: Any, value: Any = None, activation: str | None = None):
        """Write the policy as the model file ``--out`` (atomically) and return its path."""
        from agents.training.export import export_mlp

        return export_mlp(
            self.out,
            actor,
            rules=self.rules,
            features=self.features,
            value=value,
            activation=activation,
            info={
                "trained_by": f"examples/{self.name}.py",
                "library": self.library,
                "library_version": library_version(self.library),
                "timesteps": int(steps),
                "seed": int(self.args.seed),
            },
        )

    def progress(
        self, steps: int, actor: Any, value: Any = None, activation: str | None = None
    ) -> dict[str, Any] | None:
        """A curve point when ``steps`` has passed the next ``--eval-every`` mark (and
        before the budget's end, where :meth:`finish` evaluates): the row, else None."""
        if self.next_point is None or steps < self.next_point or steps >= self.args.steps:
            return None
        while self.next_point <= steps:
            self.next_point += self.args.eval_every
        return self._point(steps, actor, value, activation, self.args.eval_deals)[0]

    def finish(
        self,
        steps: int,
        actor: Any,
        value: Any = None,
        activation: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The final model file and evaluation (``--final-deals`` deals against each
        opponent), the last curve row, the summary file; prints and returns the summary."""
        train_seconds = time.perf_counter() - self.started - self.eval_seconds
        train_cpu = time.process_time() - self.started_cpu - self.eval_cpu
        row, png = self._point(steps, actor, value, activation, self.args.final_deals)
        summary = {
            "example": self.name,
            "library": self.library,
            "library_version": library_version(self.library),
            "players": self.rules.num_players,
            "rules": self.rules.to_dict(),
            "steps": int(steps),
            "seed": int(self.args.seed),
            "train_seconds": round(train_seconds, 1),
            "train_cpu_seconds": round(train_cpu, 1),
            "eval_seconds": round(self.eval_seconds, 1),
            "wall_seconds": round(time.perf_counter() - self.started, 1),
            "vs_greedy": _figures(row, "eval"),
            "vs_random": _figures(row, "random"),
            "model": str(self.out),
            "log": str(self.curve.csv_path),
            "curve": str(png) if png else None,
            **extra,
        }
        atomic_write_text(self.summary_path, json.dumps(summary, indent=2) + "\n")
        print(json.dumps(summary), flush=True)
        return summary

    def _point(
        self, steps: int, actor: Any, value: Any, activation: str | None, deals: int
    ) -> tuple[dict[str, Any], Any]:
        """Export the model file, evaluate it on ``deals`` deals into a curve row, redraw the
        PNG; the time it takes counts as evaluation, not training. The row and the PNG."""
        started, started_cpu = time.perf_counter(), time.process_time()
        path = self.export(steps, actor, value, activation)
        row = self.curve.record(steps, path, deals, **self._training_columns(steps, started))
        png = self.curve.plot()
        self.eval_seconds += time.perf_counter() - started
        self.eval_cpu += time.process_time() - started_cpu
        print(_point_line(row), flush=True)
        return row, png


def _figures(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {
        "games": row[f"{prefix}_games"],
        "win_rate": row[f"{prefix}_win_rate"],
        "ci95": [row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]],
    }


def _point_line(row: dict[str, Any]) -> str:
    return (
        f"decisions {row['timesteps']:,}: vs greedy {row['eval_win_rate']:.3f} "
        f"[{row['eval_ci_low']:.3f}, {row['eval_ci_high']:.3f}], vs random "
        f"{row['random_win_rate']:.3f} [{row['random_ci_low']:.3f}, {row['random_ci_high']:.3f}]"
        f" ({row['eval_games']} games each)"
    )
