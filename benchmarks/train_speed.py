"""How soon ``python train.py`` from scratch reaches greedy's level, in wall seconds, one run.

    python benchmarks/train_speed.py [--timesteps N] [--seed 0] [--eval-every N] [--full]
                                     [--until STEPS] [--judge STEPS [--judge-deals 1000]
                                     [--judge-seed N]] [--json benchmarks/train_speed.json]
                                     [-- TRAIN_FLAGS...]

Runs ``train.py --seed S --no-progress`` (every setting its default, the learning-rate schedule
included: 256 batched envs, greedy opponents, the periodic evaluations on 200 duplicate deals;
``--timesteps`` and ``--eval-every`` only if given, and any flags after ``--``, passed to
train.py as they are, to try a setting or keep the model with ``--out``) as a child process
and stamps each line of its output with the seconds since the child was started, so start-up
(imports, the model's set-up, the first evaluation's kernels) is included. Greedy's level: the
first periodic evaluation whose win rate against ``greedy`` is at least 0.5 (par for two
players); issue 27's target is at most 15 s.
The child is stopped there unless ``--full`` asks for the whole run (then the JSON also keeps
the final figures, ``final: vs ...`` on 1,000 duplicate deals). The JSON keeps every
evaluation row with its time and the load average before and after.

That first crossing is a noisy reading: a periodic evaluation plays 400 games (+-0.049), and a
policy at greedy's level (0.5) shows 0.5 or more on about half of them. ``--judge STEPS`` takes
the reading the project's learning targets use instead: train.py also writes a checkpoint
every STEPS steps (``--checkpoint-every``, which changes nothing in the training), the child
stops at the first evaluation row at or past STEPS (the run goes on with ``--full``), and the
model of that checkpoint is judged on ``--judge-deals`` duplicate deals of a fresh evaluation
seed (``--judge-seed``, else drawn and recorded) against ``greedy`` and ``random``: greedy's
level when the 95% interval against ``greedy`` reaches 0.5 and the rate against ``random`` is at
least 0.95. Pick STEPS at a periodic evaluation (126976 or 253952 with the default schedule)
so that the row's time is the time at which train.py held that model.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.files import atomic_write_text  # noqa: E402

ROW = re.compile(
    r"^\[(?P<steps>\d+) steps, [\d,.]+ steps/s\] vs greedy: (?P<greedy>[\d.]+) "
    r"\[[\d.]+, [\d.]+\], vs random: (?P<random>[\d.]+)"
)
FINAL = re.compile(
    r"^final: vs (?P<opponent>\w+): win rate (?P<rate>[\d.]+) \[(?P<low>[\d.]+), "
    r"(?P<high>[\d.]+)\] over (?P<games>\d+) games"
)
PAR = 0.5
TARGET_SECONDS = 15.0


def parse(stamped: list[tuple[float, str]]) -> dict:
    """The evaluation rows (steps, seconds, win rates), the final figures and the first row at
    greedy's level, from ``(seconds, line)`` pairs of train.py's output."""
    rows, final = [], {}
    for seconds, line in stamped:
        row = ROW.match(line)
        if row:
            rows.append(
                {
                    "steps": int(row["steps"]),
                    "seconds": round(seconds, 2),
                    "vs_greedy": float(row["greedy"]),
                    "vs_random": float(row["random"]),
                }
            )
        result = FINAL.match(line)
        if result:
            final[result["opponent"]] = {
                "win_rate": float(result["rate"]),
                "ci95": [float(result["low"]), float(result["high"])],
                "games": int(result["games"]),
            }
    level = next((row for row in rows if row["vs_greedy"] >= PAR), None)
    return {"rows": rows, "final": final, "greedy_level": level}


def out_path(train_flags: list[str], folder: Path) -> Path:
    """The model path train.py wrote to: the last ``--out`` of the flags, else the temporary
    one in ``folder``."""
    outs = [train_flags[i + 1] for i, flag in enumerate(train_flags[:-1]) if flag == "--out"]
    return Path(outs[-1]) if outs else folder / "model.safetensors"


def checkpoint_model(out: Path, steps: int) -> Path | None:
    """The model file (with its sidecar written) of the first checkpoint at or past ``steps``
    beside ``out``."""
    folder = out.with_name(f"{out.stem}_checkpoints")
    for model in sorted(folder.glob("step_*.safetensors")):
        if int(model.stem.split("_")[1]) >= steps and model.with_suffix(".json").exists():
            return model
    return None


def wait_for_checkpoint(out: Path, steps: int, child: subprocess.Popen) -> None:
    """Until train.py has written the checkpoint of ``steps`` (it follows the evaluation row of
    that step), or exited, or a minute passed."""
    deadline = time.monotonic() + 60
    while checkpoint_model(out, steps) is None and child.poll() is None:
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)


def judge(out: Path, steps: int, rows: list[dict], args: Any) -> dict:
    """The model of the first checkpoint at or past ``steps`` beside ``out``, judged on fresh
    duplicate deals against greedy and random, with the time of its step's row among the
    evaluation ``rows`` (module docstring)."""
    from agents.training.eval_curve import evaluate_vs

    model = checkpoint_model(out, steps)
    if model is None:
        raise SystemExit(f"--judge: train.py wrote no checkpoint at or past {steps:,} steps")
    at = int(model.stem.split("_")[1])
    row = next((r for r in rows if r["steps"] == at), None)
    seed = args.judge_seed if args.judge_seed is not None else secrets.randbelow(2**31)
    figures = {
        opponent: evaluate_vs(str(model), opponent, args.judge_deals, seed)
        for opponent in ("greedy", "random")
    }
    greedy, random = figures["greedy"], figures["random"]
    level = greedy["ci95"][1] >= PAR and random["win_rate"] >= 0.95
    seconds = None if row is None else row["seconds"]
    in_time = seconds is not None and seconds <= TARGET_SECONDS
    judged = {
        "steps": at,
        "seconds": seconds,
        "deals": args.judge_deals,
        "eval_seed": seed,
        "vs_greedy": greedy["win_rate"],
        "vs_greedy_ci95": [round(x, 4) for x in greedy["ci95"]],
        "vs_random": random["win_rate"],
        "vs_random_ci95": [round(x, 4) for x in random["ci95"]],
        "greedy_level": level,
        "met": level and in_time,
    }
    when = "no evaluation row at that step" if seconds is None else f"{seconds:.1f} s of wall"
    print(
        f"judged: the model of step {at:,} ({when}) on {args.judge_deals:,} duplicate deals of "
        f"evaluation seed {seed}: vs greedy {greedy['win_rate']:.3f} [{greedy['ci95'][0]:.3f}, "
        f"{greedy['ci95'][1]:.3f}], vs random {random['win_rate']:.3f}: greedy's level "
        f"{'reached' if level else 'NOT reached'} (target {TARGET_SECONDS:.0f} s: "
        f"{'met' if judged['met'] else 'NOT met'})"
    )
    return judged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timesteps", type=int, default=None, help="(train.py's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--eval-every", type=int, default=None, help="train.py's --eval-every (its default)"
    )
    parser.add_argument("--full", action="store_true", help="run train.py to its end")
    parser.add_argument(
        "--until",
        type=int,
        default=None,
        metavar="STEPS",
        help="with --full: stop at the first evaluation at or past STEPS (the learning curve of "
        "a run's start, the learning-rate schedule still the whole run's)",
    )
    parser.add_argument(
        "--judge",
        type=int,
        default=None,
        metavar="STEPS",
        help="judge the model of step STEPS on fresh duplicate deals (module docstring)",
    )
    parser.add_argument("--judge-deals", type=int, default=1000, metavar="N")
    parser.add_argument("--judge-seed", type=int, default=None, metavar="N")
    parser.add_argument("--json", type=Path, default=HERE / "train_speed.json")
    argv = sys.argv[1:] if argv is None else list(argv)
    own, extra = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    args = parser.parse_args(own)
    if args.timesteps is not None and args.timesteps < 1:
        parser.error("--timesteps must be at least 1")
    if args.judge is not None and args.judge < 1:
        parser.error("--judge must be at least 1 step")
    if args.judge_deals < 1:
        parser.error("--judge-deals must be at least 1")
    judge_at = args.judge
    if judge_at is not None:
        extra = ["--checkpoint-every", str(judge_at), *extra]
    load_before = os.getloadavg()[0]
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    steps = [] if args.timesteps is None else ["--timesteps", str(args.timesteps)]
    if args.eval_every is not None:
        steps += ["--eval-every", str(args.eval_every)]
    own_flags = [*steps, "--seed", str(args.seed), "--no-progress"]
    train_flags = [*own_flags, *extra]
    stopped = False
    with tempfile.TemporaryDirectory() as folder:
        out = out_path(extra, Path(folder))
        command = [
            sys.executable,
            "-u",  # unbuffered: each line is stamped when train.py prints it
            str(ROOT / "train.py"),
            *own_flags,
            "--out",  # a temporary model unless the flags after -- name one (the last wins)
            str(Path(folder) / "model.safetensors"),
            *extra,
        ]
        stamped: list[tuple[float, str]] = []
        start = time.perf_counter()
        with subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as child:
            assert child.stdout is not None
            for line in child.stdout:
                stamped.append((time.perf_counter() - start, line.rstrip("\n")))
                print(f"{stamped[-1][0]:7.2f} s  {stamped[-1][1]}", flush=True)
                latest = parse(stamped[-1:])
                row = latest["rows"][0]["steps"] if latest["rows"] else -1
                level_stop = judge_at is None and latest["greedy_level"] is not None
                row_stop = (args.until is not None and row >= args.until) or (
                    judge_at is not None and not args.full and row >= judge_at
                )
                if (not args.full and level_stop) or row_stop:
                    if judge_at is not None:  # the checkpoint follows its row
                        wait_for_checkpoint(out, judge_at, child)
                    child.terminate()  # what is measured is there: the rest is not timed
                    stopped = True
                    break
            child.wait()
        wall = time.perf_counter() - start
        if child.returncode != 0 and not stopped:
            raise SystemExit(f"train.py exited with {child.returncode}")
        figures = parse(stamped)
        if judge_at is not None:
            figures["judged"] = judge(out, judge_at, figures["rows"], args)
    level = figures["greedy_level"]
    if level is None:
        print(
            "greedy's level (an evaluation at 0.5 or more): not reached"
            + (" before the stop" if stopped else "")
        )
    else:
        met = "met" if level["seconds"] <= TARGET_SECONDS else "NOT met"
        print(
            f"greedy's level: {level['vs_greedy']:.3f} at {level['steps']:,} steps, "
            f"{level['seconds']:.1f} s of wall (target {TARGET_SECONDS:.0f} s: {met})"
        )
    meta = {
        "command": "python benchmarks/train_speed.py " + " ".join(argv),
        "train_command": " ".join(["python train.py", *train_flags]),
        "stopped_at_level": stopped,
        "date": date,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
    last = stamped[-1][0] if stamped else wall
    data = {"meta": meta, "last_line_seconds": round(last, 2), "exit_seconds": round(wall, 2)}
    data.update(figures)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.json, json.dumps(data, indent=1) + "\n")
    print(f"written: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
