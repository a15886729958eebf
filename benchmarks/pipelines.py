"""Every training pipeline at its default command, over several training seeds, each saved model
judged on fresh deals: the one table of what each pipeline learns, seed by seed.

    python benchmarks/pipelines.py --python /path/to/pipelines-venv/bin/python \\
        --python /path/to/agilerl-venv/bin/python [--only cleanrl_ppo ...] [--seeds 0 1 2]
    python benchmarks/pipelines.py --only train --rules-args "--wilds kings" --merge

Each run is ``python SCRIPT --seed S --out ...`` (plus ``--players N`` when asked, and the rules
flags of ``--rules-args``: a variant, still the script's defaults), started under
the first interpreter among ``--python`` (and this one) that has its library, since the libraries
do not install together (docs/integrations.md). Its saved model file is then evaluated here, by
the project's own evaluation, in the game its sidecar records, on ``--eval-deals`` (5,000)
duplicate deals of an evaluation seed this
benchmark draws itself (``--eval-seed``, by default a fresh random one, recorded in the JSON):
never the seed the run evaluated itself on. The figures are the model's share of the games
in one seat against copies of ``greedy`` (par: 1 / players) and of ``random``, with 95% Wilson
intervals: ``python evaluate.py --agents MODEL greedy --one-seat``, the same code.

A target holds for a pipeline only when it holds for every seed: the interval against greedy
reaches par, the win rate against random is at least 0.95 (2 players), and the run's wall time,
measured here around the whole process, is within 15 minutes. Run it on an otherwise idle
machine; ``--example-args`` passes flags to every run (a smoke test then, not the defaults).

Writes the JSON (atomically; ``--merge`` adds this run's rows to the file's, each run keeping its
own settings under ``runs`` and a seed run again replacing its row, so seeds run one at a time
add up) and prints the Markdown table that docs/integrations.md shows.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import secrets
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.files import atomic_write_text  # noqa: E402

# name -> (script, the module its library provides, the flags that make the run what it is)
RUNS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "train": ("train.py", "sb3_contrib", ()),
    "cleanrl_ppo": ("examples/cleanrl_ppo.py", "torch", ()),
    "torchrl_ppo": ("examples/torchrl_ppo.py", "torchrl", ()),
    "rllib_ppo": ("examples/rllib_ppo.py", "ray.rllib", ()),
    "rllib_selfplay": ("examples/rllib_ppo.py", "ray.rllib", ("--opponents", "self")),
    "tianshou_ppo": ("examples/tianshou_ppo.py", "tianshou", ()),
    "agilerl_ppo": ("examples/agilerl_ppo.py", "agilerl", ()),
    "jax_ppo": ("examples/jax_ppo.py", "jax", ()),
}
TARGET_WALL = 15 * 60  # seconds, on a 2-core machine
EVAL_DEALS = 5_000  # duplicate deals per opponent: an interval of about +-0.01 at 2 players
TARGET_RANDOM = 0.95  # 2-player games
DEFAULT_SEEDS = (0, 1, 2)


def has_module(python: str, module: str) -> bool:
    code = (
        "import importlib.util, sys\n"
        "try:\n    found = importlib.util.find_spec(sys.argv[1]) is not None\n"
        "except ModuleNotFoundError:\n    found = False\n"
        "sys.exit(0 if found else 1)"
    )
    done = subprocess.run([python, "-c", code, module], capture_output=True, timeout=120)
    return done.returncode == 0


def library_version(python: str, module: str) -> str:
    code = (
        "import importlib.metadata as m, sys\n"
        "name = {'ray.rllib': 'ray', 'sb3_contrib': 'sb3-contrib'}.get(sys.argv[1], sys.argv[1])\n"
        "print(m.version(name))"
    )
    done = subprocess.run([python, "-c", code, module], capture_output=True, text=True, timeout=120)
    return done.stdout.strip() or "?"


def check_rules_args(text: str, players: int) -> dict[str, Any]:
    """The rules options of ``--rules-args`` (``ValueError`` naming the flag: anything but a
    rules flag, ``--players``, which has its own flag, or a combination the game refuses)."""
    from trash_env.cli import add_rules_arguments, rules_options
    from trash_env.rules import Rules

    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    add_rules_arguments(parser)
    try:
        words = shlex.split(text)
        parsed, rest = parser.parse_known_args(words)
    except (ValueError, argparse.ArgumentError) as error:
        raise ValueError(f"--rules-args: {error}") from None
    if rest:
        raise ValueError(
            f"--rules-args takes rules flags only (docs/rules.md), got {' '.join(rest)}"
        )
    options = rules_options(parsed)
    if "num_players" in options:
        raise ValueError("--rules-args: give the player count with --players")
    try:
        Rules.from_options(**{**options, "num_players": players})
    except ValueError as error:
        raise ValueError(f"--rules-args: {error}") from None
    return options


def run_key(name: str, args: argparse.Namespace) -> str:
    """The name a run's rows go under in the JSON: the run, its player count and variant."""
    return " ".join(
        [name, *(["--players", str(args.players)] if args.players != 2 else [])]
        + shlex.split(args.rules_args)
    )


def run_folder(name: str, args: argparse.Namespace) -> str:
    """The folder of a run's models under ``--runs`` (one per run, player count and variant)."""
    variant = "".join(c if c.isalnum() else "_" for c in args.rules_args.strip().lstrip("-"))
    return f"{name}_p{args.players}" + (f"_{variant}" if variant else "")


def merged(path: str, key: str, settings: dict[str, Any], rows: list) -> dict[str, Any]:
    """The JSON at ``path`` (one file of merged runs, each with its settings under ``runs``)
    with ``rows`` under ``key``: they replace the key's earlier rows of the same training
    seeds and join those of other seeds (seeds run one at a time add up; each row names its
    evaluation seed, ``runs`` keeps the latest run's settings)."""
    try:
        old = json.loads(Path(path).read_text())
    except FileNotFoundError:
        old = {}
    except (OSError, ValueError) as error:
        raise SystemExit(f"--merge: cannot read {path}: {error}") from None
    if old and "runs" not in old:  # one run's file: made the first run of the merge
        old = {
            "runs": {
                name: {k: v for k, v in old.items() if k != "results"}
                for name in old.get("results", {})
            },
            "results": old.get("results", {}),
        }
    note = "one pipelines.py run per example (each its own fresh evaluation seed), merged"
    runs = {**old.get("runs", {}), key: settings}
    seeds = {row.get("seed") for row in rows}
    kept = [row for row in old.get("results", {}).get(key, []) if row.get("seed") not in seeds]
    joined = sorted(kept + rows, key=lambda row: (row.get("seed") is None, row.get("seed", 0)))
    return {
        "note": old.get("note", note),
        "runs": runs,
        "results": {**old.get("results", {}), key: joined},
    }


def _children_cpu() -> float:
    """User plus system CPU seconds of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def judge(model: Path, deals: int, seed: int) -> dict[str, Any]:
    """The model's figures in one seat against greedy and random on ``deals`` duplicate deals
    of ``seed``, in the game its sidecar records (a variant's run is judged in its own game)."""
    from agents.policies.model_file import read_sidecar
    from agents.training.eval_curve import evaluate_vs
    from trash_env.rules import Rules

    rules = Rules.from_options(**read_sidecar(model)["rules"])
    figures = {}
    for opponent in ("greedy", "random"):
        result = evaluate_vs(str(model), opponent, deals, seed, rules, workers=2)
        figures[f"vs_{opponent}"] = {
            "games": result["games"],
            "win_rate": round(result["win_rate"], 4),
            "ci95": [round(x, 4) for x in result["ci95"]],
        }
    return figures


def run_once(
    name: str, python: str, seed: int, args: argparse.Namespace, eval_seed: int
) -> dict[str, Any]:
    script, _, flags = RUNS[name]
    out = Path(args.runs) / run_folder(name, args) / f"seed{seed}" / "model.safetensors"
    players = ("--players", str(args.players)) if args.players != 2 else ()
    variant = shlex.split(args.rules_args)
    typed = [
        script,
        *flags,
        "--seed",
        str(seed),
        *players,
        *variant,
        *shlex.split(args.example_args),
    ]
    command = [python, *typed, "--out", str(out)]
    load_before = os.getloadavg()[0]
    started, cpu_before = time.perf_counter(), _children_cpu()
    env = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONPATH=str(ROOT))
    row: dict[str, Any] = {
        "run": name,
        "seed": seed,
        "command": " ".join(shlex.quote(x) for x in ["python", *typed]),  # as a user types it
        "python": python,
        "eval_seed": eval_seed,  # merged runs of one key may each have drawn their own
    }
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout
        )
    except subprocess.TimeoutExpired:
        return {**row, "status": f"timed out after {args.timeout:.0f} s"}
    wall = time.perf_counter() - started
    row.update(
        measured_wall_seconds=round(wall, 1),
        cpu_seconds=round(_children_cpu() - cpu_before, 1),  # the run's user + sys
        load_before=round(load_before, 2),
        load_after=round(os.getloadavg()[0], 2),
    )
    if done.returncode != 0 or not out.exists():
        tail = (done.stderr.strip() or done.stdout.strip())[-600:]
        return {**row, "status": f"failed (exit {done.returncode}): {tail}"}
    row.update(status="ok", model=str(out), **judge(out, args.eval_deals, eval_seed))
    par = 1 / args.players
    met = {
        "greedy_interval_reaches_par": row["vs_greedy"]["ci95"][1] >= par,
        "wall_within_15_min": wall <= TARGET_WALL,
    }
    if args.players == 2:
        met["random_at_least_0.95"] = row["vs_random"]["win_rate"] >= TARGET_RANDOM
    row.update(target=met, target_met=all(met.values()))
    return row


def interval(figures: dict[str, Any]) -> str:
    low, high = figures["ci95"]
    return f"{figures['win_rate']:.3f} [{low:.3f}, {high:.3f}]"


def verdict(row: dict[str, Any]) -> str:
    missed = [name for name, met in row["target"].items() if not met]
    return "met" if not missed else "not met: " + ", ".join(missed)


def worst(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The seed whose win rate against greedy is lowest (a failed run counts as worst)."""
    failed = [row for row in rows if row.get("status") != "ok"]
    if failed:
        return failed[0]
    return min(rows, key=lambda row: row["vs_greedy"]["win_rate"]) if rows else None


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| run | seed | wall | vs random (95% CI) | vs greedy (95% CI) | games each | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.get("status") != "ok":
            lines.append(f"| {row['run']} | {row.get('seed', '')} | | | | | {row.get('status')} |")
            continue
        minutes, seconds = divmod(round(row["measured_wall_seconds"]), 60)
        lines.append(
            f"| `{row['command']}` | {row['seed']} | {minutes} min {seconds:02d} s "
            f"| {interval(row['vs_random'])} | {interval(row['vs_greedy'])} "
            f"| {row['vs_greedy']['games']:,} | {verdict(row)} |"
        )
    return "\n".join(lines)


def summary(results: dict[str, list[dict[str, Any]]]) -> str:
    lines = [
        "| run | seeds | every seed meets the target | worst seed vs greedy |",
        "|---|---|---|---|",
    ]
    for name, rows in results.items():
        bad = worst(rows)
        every = bool(rows) and all(row.get("target_met") for row in rows)
        shown = (
            ""
            if bad is None
            else f"seed {bad.get('seed')}: "
            + (interval(bad["vs_greedy"]) if bad.get("status") == "ok" else bad.get("status", ""))
        )
        seeds = ", ".join(str(row.get("seed")) for row in rows)
        lines.append(f"| {name} | {seeds} | {'yes' if every else 'no'} | {shown} |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--python",
        action="append",
        default=[],
        help="an interpreter to run with (repeatable; tried in order, then this one)",
    )
    parser.add_argument("--only", nargs="+", choices=sorted(RUNS), help="these runs")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS), help="training seeds"
    )
    parser.add_argument("--players", type=int, default=2, choices=range(2, 7), metavar="{2..6}")
    parser.add_argument(
        "--eval-seed",
        type=int,
        default=None,
        help="the evaluation seed (default: a fresh random one, recorded in the JSON)",
    )
    parser.add_argument(
        "--eval-deals", type=int, default=EVAL_DEALS, help="duplicate deals each (default: 5000)"
    )
    parser.add_argument(
        "--rules-args",
        default="",
        help='rules flags for every run, a variant of the game (e.g. "--wilds kings"): the runs '
        "are still the scripts' defaults, judged in the variant's game; one flag alone takes "
        "=: --rules-args=--jokers",
    )
    parser.add_argument(
        "--merge",
        action="store_true",
        help="add this run's rows to those of --json (rows of the same run, player count, "
        "rules flags and training seed are replaced) instead of writing a new file",
    )
    parser.add_argument("--runs", default="runs/pipelines", help="where the models go")
    parser.add_argument("--json", default="benchmarks/pipelines.json", help="the JSON written")
    parser.add_argument(
        "--example-args", default="", help="flags for every run (not the defaults then)"
    )
    parser.add_argument(
        "--timeout", type=float, default=3600, help="seconds before a run is stopped"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.timeout <= 86400:
        parser.error(f"--timeout must be from 1 to 86400 seconds, got {args.timeout}")
    if not 1 <= args.eval_deals <= 100_000:
        parser.error(f"--eval-deals must be from 1 to 100000, got {args.eval_deals}")
    try:
        check_rules_args(args.rules_args, args.players)
    except ValueError as error:
        parser.error(str(error))
    if any(seed < 0 for seed in args.seeds) or (args.eval_seed is not None and args.eval_seed < 0):
        parser.error("seeds must be 0 or more")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    eval_seed = args.eval_seed if args.eval_seed is not None else secrets.randbits(31)
    if eval_seed in args.seeds:
        raise SystemExit(f"--eval-seed {eval_seed} is also a training seed: pick another")
    print(f"evaluation seed {eval_seed}, {args.eval_deals} duplicate deals", flush=True)
    pythons = [*args.python, sys.executable]
    results: dict[str, list[dict[str, Any]]] = {}
    libraries = {}
    for name in args.only or list(RUNS):
        module = RUNS[name][1]
        python = next((p for p in pythons if has_module(p, module)), None)
        if python is None:
            results[name] = [{"run": name, "status": f"not run: no --python has {module}"}]
            print(table(results[name]).splitlines()[-1], flush=True)
            continue
        libraries[name] = {"module": module, "version": library_version(python, module)}
        results[name] = []
        for seed in args.seeds:
            print(f"{name} seed {seed}: running with {python} ...", flush=True)
            results[name].append(run_once(name, python, seed, args, eval_seed))
            print(table(results[name][-1:]).splitlines()[-1], flush=True)
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "threads": {
                key: os.environ[key]
                for key in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
                if key in os.environ
            },
        },
        "players": args.players,
        "eval_seed": eval_seed,
        "eval_deals": args.eval_deals,
        "rules_args": args.rules_args,
        "example_args": args.example_args,
        "libraries": libraries,
        "results": results,
    }
    written = report
    if args.merge:
        for name, rows in results.items():
            settings = {k: v for k, v in report.items() if k != "results"}
            settings["libraries"] = {name: libraries[name]} if name in libraries else {}
            written = merged(args.json, run_key(name, args), settings, rows)
            atomic_write_text(args.json, json.dumps(written, indent=2) + "\n")
    else:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    print(table([row for rows in results.values() for row in rows]))
    print()
    print(summary(results))
    return report


if __name__ == "__main__":
    main()
