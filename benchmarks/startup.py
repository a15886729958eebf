"""Start-up of short commands, as ratios to ``python -c "import trash_env"`` in the same run.

    python benchmarks/startup.py [--repeats 5] [--cold] [--json benchmarks/startup.json]

Rows, each a whole new process:

- ``import``: ``python -c "import trash_env"``, the unit of the ratios;
- ``evaluate``: ``python evaluate.py --agents greedy random --deals 1``, what a user types
  (2 games: the reference engine, agents/evaluation/batched.py's ``SMALL_GAMES``); issue 40's
  target is at most 2x ``import``;
- ``evaluate batched``: the same with ``--engine batched``: numba and the kernels it needs,
  loaded from numba's warm cache;
- ``train``: ``python train.py`` until its first line (``training N steps ...``): imports,
  torch, the batched env and the model, up to the first step.

Every repetition runs the rows one after the other (the same load for each), and the ratios
are taken per repetition; the medians are printed. Before them, each command runs once
untimed, so numba's cache is warm. ``--cold`` first times one ``evaluate batched`` on an
empty cache (``NUMBA_CACHE_DIR`` a new temporary folder): a new install's first batched
evaluation, the compilation included, with the lines it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
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

EVALUATE = ["evaluate.py", "--agents", "greedy", "random", "--deals", "1", "--no-progress"]
ROWS = {
    "import": ["-c", "import trash_env"],
    "evaluate": EVALUATE,
    "evaluate batched": [*EVALUATE, "--engine", "batched"],
}
TRAIN_FIRST_LINE = "training "


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Seconds of a whole ``python ARGS`` process, and its stderr."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env or _env(), capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"startup.py: {' '.join(args)} failed:\n{done.stderr}")
    return seconds, done.stderr


def train_start(folder: Path) -> float:
    """Seconds from starting ``python train.py`` to its first line; the run is then stopped."""
    args = [
        "train.py",
        "--timesteps",
        "4096",
        "--no-progress",
        "--eval-every",
        "0",
        "--out",
        str(folder / "m.safetensors"),
    ]
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-u", *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith(TRAIN_FIRST_LINE):
                return time.perf_counter() - start
        raise SystemExit(f"startup.py: train.py ended without a line {TRAIN_FIRST_LINE!r}")
    finally:
        child.kill()
        child.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repetitions (default 5)")
    parser.add_argument("--cold", action="store_true", help="first time a compilation")
    parser.add_argument("--no-train", action="store_true", help="leave out the train row")
    parser.add_argument("--json", type=Path, help="write the figures there")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be 1 or more, got {args.repeats}")
    load_before = os.getloadavg()
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        if args.cold:
            seconds, said = timed(ROWS["evaluate batched"], _env(NUMBA_CACHE_DIR=scratch))
            result["cold evaluate batched"] = round(seconds, 2)
            print(f"a new install's first batched evaluation: {seconds:.1f} s")
            print("".join(f"  | {line}\n" for line in said.splitlines() if "trash_env" in line))
        rows = [*ROWS, *([] if args.no_train else ["train"])]

        def run(row: str) -> float:
            return train_start(folder) if row == "train" else timed(ROWS[row])[0]

        for row in rows:
            run(row)  # warm: numba's cache, the OS's file cache
        times: dict[str, list[float]] = {row: [] for row in rows}
        for _ in range(args.repeats):
            for row in rows:
                times[row].append(run(row))
    load_after = os.getloadavg()
    unit = times["import"]
    print(f"{'row':<18} {'median s':>9} {'ratio to import':>16}  (per repetition)")
    for row in rows:
        ratios = [t / u for t, u in zip(times[row], unit, strict=True)]
        print(
            f"{row:<18} {statistics.median(times[row]):9.2f} {statistics.median(ratios):16.2f}"
            f"  ({', '.join(f'{r:.2f}' for r in ratios)})"
        )
        result[row] = {
            "seconds": [round(t, 3) for t in times[row]],
            "median_seconds": round(statistics.median(times[row]), 3),
            "median_ratio": round(statistics.median(ratios), 2),
        }
    print(f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after")
    result |= {
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in load_after],
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
    }
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
