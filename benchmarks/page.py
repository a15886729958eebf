"""docs/benchmarks.md's figures from one run of the benchmarks, so that the page cannot drift.

    python benchmarks/page.py run [--quick]     # every step below, then render
    python benchmarks/page.py render [--check]  # the page from the JSON files only

``run`` runs these steps one after the other, each a child process writing its JSON file
(committed beside the scripts), and records each step's command, start, end and load average
(one minute) in ``benchmarks/page.json``:

1. ``benchmarks/run.py`` (every section: the AEC env, engine, solo env, training, evaluation
   and memory against their peers) -> ``benchmarks/results.json``;
2. ``benchmarks/evaluate_speed.py --long`` (the batched evaluation against the reference
   path, whole processes) -> ``benchmarks/evaluate_speed.json``;
3. ``benchmarks/vector.py --only cores`` (the kernels on one core and on every core)
   -> ``benchmarks/vector_cores.json``;
4. ``benchmarks/train_speed.py --judge 126976`` (train.py from scratch to greedy's level: the
   model of step 126,976 judged on 1,000 fresh duplicate deals) -> ``benchmarks/train_speed.json``.

``--quick`` passes each script its quick options (fewer repetitions and games) and says so on
the page. ``render`` rewrites the part of docs/benchmarks.md between the two ``page.py``
markers from those files alone; ``--check`` only compares and exits 1 if the page differs
(tests/test_benchmark_page.py). Every target is judged from the figures of this run; a
target the run does not show met is printed NOT met.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.files import atomic_write_text  # noqa: E402

PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- page.py: begin (python benchmarks/page.py render writes what follows) -->"
END = "<!-- page.py: end -->"

FILES = {
    "run": "results.json",
    "evaluate_speed": "evaluate_speed.json",
    "cores": "vector_cores.json",
    "train_speed": "train_speed.json",
}
RECORD = "page.json"
# The default run's periodic evaluation at ~125k steps (31 rollouts of 4,096): the model
# train.py holds there is judged on fresh deals (benchmarks/train_speed.py --judge).
JUDGE_STEPS = 126_976


def steps(quick: bool, folder: str) -> list[tuple[str, list[str]]]:
    """The run's steps: a name (a key of FILES) and the script's arguments."""
    run = ["benchmarks/run.py", "--json", f"{folder}/{FILES['run']}"]
    speed = ["benchmarks/evaluate_speed.py", "--long", "--json"]
    speed.append(f"{folder}/{FILES['evaluate_speed']}")
    cores = ["benchmarks/vector.py", "--only", "cores", "--json", f"{folder}/{FILES['cores']}"]
    if quick:
        run += ["--quick", "--repeats", "3"]
    else:
        speed += ["--repeats", "2"]
    cores += ["--repeats", "3", "--seconds", "2"]
    train = ["benchmarks/train_speed.py", "--judge", str(JUDGE_STEPS)]
    train += ["--json", f"{folder}/{FILES['train_speed']}"]
    return [("run", run), ("evaluate_speed", speed), ("cores", cores), ("train_speed", train)]


def utc() -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())


def run_all(quick: bool, folder: str) -> None:
    """Every step in turn, its record in page.json (written after each step)."""
    record: dict = {"quick": quick, "cpus": os.cpu_count(), "steps": []}
    for name, arguments in steps(quick, folder):
        entry = {
            "name": name,
            "command": "python " + " ".join(arguments),
            "start": utc(),
            "load_start": round(os.getloadavg()[0], 2),
        }
        print(f"== {entry['command']} ({entry['start']} UTC, load {entry['load_start']})")
        started = time.perf_counter()
        code = subprocess.run([sys.executable, *arguments], cwd=ROOT).returncode
        entry.update(
            end=utc(),
            load_end=round(os.getloadavg()[0], 2),
            seconds=round(time.perf_counter() - started),
            exit=code,
        )
        record["steps"].append(entry)
        atomic_write_text(ROOT / folder / RECORD, json.dumps(record, indent=1) + "\n")
        if code != 0:
            raise SystemExit(f"{entry['command']} exited with {code}")


# ---------------------------------------------------------------------- rendering


def number(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def pairs(reference: list[float], values: list[float]) -> list[float]:
    """The ratios reference / this of the repetitions, pair by pair."""
    return [a / b for a, b in zip(reference, values, strict=False) if b > 0]


def ratio_text(ratios: list[float]) -> str:
    median = statistics.median(ratios)
    if len(ratios) < 2:
        return f"{median:.2f}x"
    return f"{median:.2f}x [{min(ratios):.2f}, {max(ratios):.2f}]"


def met(ok: bool | None) -> str:
    return {True: "**met**", False: "**NOT met**", None: "not measured"}[ok]


def value_text(row: dict) -> str:
    if row["unit"] == "fraction":
        return f"{100 * row['median']:.1f}%"
    if row["unit"] == "bytes":
        size = row["median"]
        return f"{size / 1024:,.1f} KiB" if size < 2**20 else f"{size / 2**20:,.1f} MiB"
    return number(row["median"])


def render_steps(record: dict) -> list[str]:
    first, last = record["steps"][0], record["steps"][-1]
    quick = " with each script's quick options" if record.get("quick") else ""
    lines = [
        f"One run of `python benchmarks/page.py run`{quick}, {first['start']} to {last['end']} UTC,"
        f" on {record['cpus']} CPUs shared with other jobs: the load average (one minute) at "
        "the start and end of each step says how busy the machine was. Absolute figures move "
        "with the load; ratios measured pair by pair hold better.",
        "",
        "| step | command | start (UTC) | load at start, end | seconds |",
        "|---|---|---|---|---:|",
    ]
    for step in record["steps"]:
        lines.append(
            f"| {step['name']} | `{step['command']}` | {step['start']} | "
            f"{step['load_start']:.1f}, {step['load_end']:.1f} | {step['seconds']} |"
        )
    return lines


def render_run(data: dict) -> list[str]:
    lines = [
        "",
        "### Against the peers (`benchmarks/run.py`)",
        "",
        "Ratio column: the section's reference row / this row, the median of the pairs "
        "taken in the same repetition, the range of the pairs in brackets.",
        "",
        "| section | benchmark | median | unit | reference / this | note |",
        "|---|---|---:|---|---:|---|",
    ]
    for section, result in data["sections"].items():
        if "skipped" in result:
            lines.append(f"| {section} | skipped: {result['skipped']} | | | | |")
            continue
        reference = next((r["values"] for r in result["rows"] if r.get("reference")), None)
        for row in result["rows"]:
            if "skipped" in row:
                lines.append(f"| {section} | {row['name']} | skipped | | | {row['skipped']} |")
                continue
            if row.get("reference"):
                ratio = "reference"
            elif reference and "ratio" in row:
                ratio = ratio_text(pairs(reference, row["values"]))
            else:
                ratio = ""
            unit = "" if row["unit"] in ("bytes", "fraction") else row["unit"]
            note = row.get("note", "").replace("|", "/")
            lines.append(
                f"| {section} | {row['name']} | {value_text(row)} | {unit} | {ratio} | {note} |"
            )
    lines += ["", "Targets, judged by `run.py` from these figures:", ""]
    for goal in data["targets"]:
        measured = goal["measured"]
        shown = ""
        if measured is not None:
            shown = f" ({number(measured)})" if measured >= 100 else f" ({measured:.3g})"
        lines.append(f"- {goal['target']}: {met(goal['met'])}{shown}")
    return lines


def render_evaluate_speed(data: dict) -> list[str]:
    lines = [
        "",
        "### Evaluation on the batched engine, measured (`benchmarks/evaluate_speed.py`)",
        "",
        "Whole `evaluate.py` processes, start-up included; games/s = games / wall seconds; "
        "ratio: batched / the reference engine, both with `--workers 2` (the batched engine "
        "splits the deals over the two processes from `SPLIT_MIN_GAMES` games per worker on, "
        "else plays them in one), the median of the pairs (each pair in brackets).",
        "",
        "| case | games | reference, 2 workers | batched, 2 workers | batched / reference "
        "(pairs) |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in data["rows"]:
        each = ", ".join(f"{r:.2f}x" for r in row["ratios"])
        lines.append(
            f"| {row['case']} | {number(row['games'])} | "
            f"{number(row['reference_games_per_s'])} games/s | "
            f"{number(row['batched_games_per_s'])} games/s | {row['ratio']:.2f}x ({each}) |"
        )
    lines += ["", "Targets (issue 27, whole 2-player games, start-up included):", ""]
    for case, games, goal in (
        ("2p greedy vs random", 10_000, 5.0),
        ("2p model file vs greedy", 10_000, 5.0),
        ("2p greedy vs random, 100k", 100_000, 10.0),
    ):
        row = next((r for r in data["rows"] if r["case"] == case), None)
        ok = None if row is None else min(row["ratios"]) >= goal
        shown = ""
        if row is not None:
            shown = f": {row['ratio']:.2f}x, lowest pair {min(row['ratios']):.2f}x"
        lines.append(
            f"- {case}, {number(games)} games, at least {goal:.0f}x the `--workers 2` path"
            f"{shown}: {met(ok)} (every pair must reach it)"
        )
    return lines


def render_cores(data: dict) -> list[str]:
    rows = data["sections"]["cores"]
    one = next(r for r in rows if "one core" in r["name"])
    every = next(r for r in rows if "every core" in r["name"])
    ratios = pairs(every["values"], one["values"])
    ok = statistics.median(ratios) >= 1.6
    return [
        "",
        "### The kernels on both cores (`benchmarks/vector.py --only cores`)",
        "",
        f"`{every['name']}`: {number(every['median'])} decisions/s against "
        f"`{one['name']}`: {number(one['median'])}, **{ratio_text(ratios)}** (target 1.6x: "
        f"{met(ok)}).",
    ]


def render_train_speed(data: dict) -> list[str]:
    lines = [
        "",
        "### train.py from scratch to greedy's level (`benchmarks/train_speed.py`)",
        "",
        f"`{data['meta']['train_command']}` as a child process, each output line stamped "
        "with the seconds since it was started (start-up included); win rates on 200 "
        "duplicate deals (400 games) against each bot.",
        "",
        "| steps | wall (s) | vs `greedy` | vs `random` |",
        "|---:|---:|---:|---:|",
    ]
    for row in data["rows"]:
        lines.append(
            f"| {number(row['steps'])} | {row['seconds']:.1f} | {row['vs_greedy']:.3f} | "
            f"{row['vs_random']:.3f} |"
        )
    level, judged = data["greedy_level"], data.get("judged")
    lines.append("")
    if judged is not None:
        when = "no row" if judged["seconds"] is None else f"**{judged['seconds']:.1f} s**"
        low, high = judged["vs_greedy_ci95"]
        reached = "reached" if judged["greedy_level"] else "**not reached**"
        lines.append(
            f"Greedy's level, judged: the model of step {number(judged['steps'])} ({when} of "
            f"wall) on {number(judged['deals'])} duplicate deals of evaluation seed "
            f"{judged['eval_seed']}: vs `greedy` {judged['vs_greedy']:.3f} [{low:.3f}, "
            f"{high:.3f}], vs `random` {judged['vs_random']:.3f}: {reached} (the interval "
            f"reaches 0.5 and `random` at least 0.95; target at most 15 s: {met(judged['met'])})."
        )
    if level is None:
        stop = "" if judged is None else f" before the run stopped at {number(judged['steps'])}"
        lines.append(
            f"Greedy's level (the first evaluation at 0.5 or more against `greedy`, a noisy "
            f"reading of 400 games): **not reached**{stop}."
        )
    else:
        ok = level["seconds"] <= 15.0
        lines.append(
            f"Greedy's level (the first evaluation at 0.5 or more against `greedy`): "
            f"{level['vs_greedy']:.3f} at {number(level['steps'])} steps, "
            f"**{level['seconds']:.1f} s** of wall (target at most 15 s: {met(ok)})."
        )
    final = data["final"]
    if final:
        shown = "; ".join(
            f"vs `{name}` {f['win_rate']:.3f} [{f['ci95'][0]:.3f}, {f['ci95'][1]:.3f}] over "
            f"{number(f['games'])} games"
            for name, f in final.items()
        )
        lines.append(
            f"Final figures: {shown}; train.py's last line at {data['last_line_seconds']:.1f} s, "
            f"its exit at {data['exit_seconds']:.1f} s."
        )
    return lines


def render(folder: Path = HERE) -> str:
    """The generated part of the page, from the JSON files in ``folder``."""
    record = json.loads((folder / RECORD).read_text())
    data = {name: json.loads((folder / path).read_text()) for name, path in FILES.items()}
    lines = [BEGIN, "", *render_steps(record)]
    lines += render_run(data["run"])
    lines += render_evaluate_speed(data["evaluate_speed"])
    lines += render_cores(data["cores"])
    lines += render_train_speed(data["train_speed"])
    return "\n".join([*lines, "", END])


def page_with(generated: str, page: str) -> str:
    """``page`` with the part between the markers replaced by ``generated``."""
    if page.count(BEGIN) != 1 or page.count(END) != 1:
        raise SystemExit("the page's page.py markers must appear once each")
    head, rest = page.split(BEGIN)
    tail = rest.split(END)[1]
    return head + generated + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run every benchmark step, then render")
    run.add_argument("--quick", action="store_true", help="each script's quick options")
    check = commands.add_parser("render", help="write the page from the JSON files")
    check.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    for command in (run, check):
        command.add_argument(
            "--dir", default="benchmarks", help="the JSON files' folder, from the repository root"
        )
        command.add_argument("--page", type=Path, default=PAGE, help="the page to write")
    args = parser.parse_args(argv)
    if args.command == "run":
        run_all(args.quick, args.dir)
    page = args.page.read_text()
    new = page_with(render(ROOT / args.dir), page)
    if args.command == "render" and args.check:
        if new != page:
            print(f"{args.page} differs from the JSON files: python benchmarks/page.py render")
            return 1
        return 0
    if new != page:
        atomic_write_text(args.page, new)
    print(f"rendered {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
