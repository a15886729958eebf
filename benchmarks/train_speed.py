"""How soon ``python train.py`` from scratch reaches greedy's level, in wall seconds, one run.

    python benchmarks/train_speed.py [--timesteps N] [--seed 0] [--eval-every N] [--full]
                                     [--until STEPS] [--json benchmarks/train_speed.json]
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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    parser.add_argument("--json", type=Path, default=HERE / "train_speed.json")
    argv = sys.argv[1:] if argv is None else list(argv)
    own, extra = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    args = parser.parse_args(own)
    if args.timesteps is not None and args.timesteps < 1:
        parser.error("--timesteps must be at least 1")
    load_before = os.getloadavg()[0]
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    steps = [] if args.timesteps is None else ["--timesteps", str(args.timesteps)]
    if args.eval_every is not None:
        steps += ["--eval-every", str(args.eval_every)]
    train_flags = [*steps, "--seed", str(args.seed), "--no-progress", *extra]
    stopped = False
    with tempfile.TemporaryDirectory() as folder:
        command = [
            sys.executable,
            "-u",  # unbuffered: each line is stamped when train.py prints it
            str(ROOT / "train.py"),
            *train_flags[: len(train_flags) - len(extra)],
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
                if not args.full and latest["greedy_level"] is not None:
                    child.terminate()  # the level is reached: the rest is not timed
                    stopped = True
                    break
                if args.until is not None and latest["rows"]:
                    if latest["rows"][0]["steps"] >= args.until:
                        child.terminate()
                        stopped = True
                        break
        wall = time.perf_counter() - start
    if child.returncode != 0 and not stopped:
        raise SystemExit(f"train.py exited with {child.returncode}")
    figures = parse(stamped)
    level = figures["greedy_level"]
    if level is None:
        print("greedy's level: not reached")
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
