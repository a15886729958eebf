"""The batched engine (``trash_env.vector``) against the reference engine and envs, in one run.

    python benchmarks/vector.py [--repeats 3] [--seconds 2] [--batch 1024] [--quick]
                                [--json benchmarks/vector.json]

Rows (every repetition measures a section's candidates interleaved, so that ratios are taken
pair by pair under the same load; medians over the repetitions are reported):

- ``engine``: decisions/s on one core. The reference ``Game.step`` loop of
  ``benchmarks/run.py`` (random legal choices, a new ``Game`` per game) against a
  ``VectorGame`` of ``--batch`` games (random legal choices drawn in the batch, finished games
  re-dealt in place). Target: at least 10x.
- ``cores``: the same ``VectorGame`` loop at ``--wide-batch`` games (4,096), its kernels on one
  core (``parallel=False``) against every core (``parallel=True``: numba ``prange`` across the
  games, bit-identical results). Target: at least 1.6x on the 2-core machine.
- ``env``: learner steps/s against greedy, random learner actions: ``TrashSoloEnv`` (run.py's
  solo loop) against ``TrashVecEnv`` of ``--batch`` games.
- ``train``: MaskablePPO env steps/s against greedy with per-deal rewards. The reference is
  train.py's old default: ``DummyVecEnv`` of 4 ``Monitor(TrashSoloEnv)``, 512 steps per env
  per rollout, with the old PPO settings (``OLD_PPO``: lr 1e-4, minibatch 256, 5 epochs).
  Against it: ``TrashVecEnv`` with the OLD PPO settings (4 x 512, and 64 x 32, the batched
  default before the new defaults: the same 2,048-sample rollouts, so the same PPO updates),
  ``DummyVecEnv`` 64 x 32 as the fair peer of the latter, and ``TrashVecEnv`` with train.py's
  NEW defaults (its parser: envs x steps of the batched path, minibatch, epochs, lr, network
  and input features, shaping).
  Target: the batched VecEnv at least 3x the old default; say which row meets it.
- ``memory``: bytes per game: a ``VectorGame``'s state arrays, a whole ``TrashVecEnv`` per env
  (tracemalloc), against a ``TrashSoloEnv`` and an AEC ``trash_env.env()`` per instance.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

import run  # noqa: E402  (benchmarks/run.py: the reference loops and helpers)

from trash_env.files import atomic_write_text  # noqa: E402

now = time.perf_counter


def batched_engine_loop(
    seconds: float, seed: int, batch_size: int, parallel: bool | None = False
) -> float:
    """Decisions/s of a ``VectorGame``: random legal engine actions chosen in the batch (the
    same uniform choice as run.py's loop), games re-dealt in the step as they end; its
    kernels on one core unless ``parallel``."""
    from trash_env.rules import Rules
    from trash_env.vector import VectorGame
    from trash_env.vector import _kernels as K

    batch = VectorGame(Rules(), batch_size, seed=seed, parallel=parallel)
    words = np.random.default_rng(seed).integers(0, 2**64, size=(batch_size, 6), dtype=np.uint64)
    words[:, 3] |= np.uint64(1)
    words[:, 4:] = 0
    actions = np.empty(batch_size, np.int64)
    games = batch.games
    decisions = 0
    start = now()
    while True:
        for _ in range(20):
            K.batch_random_actions(games, words, actions, parallel=parallel)
            decisions += int(np.count_nonzero(batch.step(actions, autoreset=True)))
        elapsed = now() - start
        if elapsed > seconds:
            return decisions / elapsed


def batched_env_loop(seconds: float, seed: int, batch_size: int) -> float:
    """Learner steps/s of ``TrashVecEnv`` against greedy, random legal learner actions."""
    from trash_env.vector import TrashVecEnv

    env = TrashVecEnv(batch_size, ["greedy"], seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    steps = 0
    start = now()
    while True:
        for _ in range(10):
            masks = env.action_masks()
            env.step_async((masks * rng.random(masks.shape)).argmax(axis=1))
            env.step_wait()
            steps += batch_size
        elapsed = now() - start
        if elapsed > seconds:
            return steps / elapsed


# train.py's PPO settings before the new defaults (the setting of the old reference row).
OLD_PPO = {
    "learning_rate": 1e-4,
    "batch_size": 256,
    "n_epochs": 5,
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "ent_coef": 0.001,
    "policy_kwargs": {"net_arch": [128, 128]},
}


def new_defaults() -> tuple[int, int, dict, float]:
    """(envs, n_steps, PPO settings, shaping coefficient) of train.py's default run on the
    batched path, read from its settled default config."""
    from agents.training.config import GAE_LAMBDA, TrainConfig, settle
    from agents.training.run import policy_kwargs

    config = settle(TrainConfig(vec="batched"))
    ppo = {
        "learning_rate": config.lr,
        "batch_size": config.batch_size,
        "n_epochs": config.epochs,
        "gamma": config.gamma,
        "gae_lambda": GAE_LAMBDA,
        "ent_coef": config.ent_coef,
        "policy_kwargs": policy_kwargs(config),
    }
    return config.envs, config.n_steps, ppo, config.shaping


def train_batched(
    timesteps: int,
    n_envs: int,
    n_steps: int,
    seed: int,
    batched: bool,
    ppo: dict | None = None,
    shaping: float = 0.0,
) -> float:
    """MaskablePPO env steps/s against greedy with per-deal rewards and the PPO settings
    ``ppo`` (default ``OLD_PPO``), on ``TrashVecEnv`` (``batched``, with the progress
    shaping's coefficient ``shaping``) or a DummyVecEnv of Monitor(TrashSolo)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from trash_env.vector import make_vec_env

    torch.set_num_threads(1)
    if batched:
        venv = make_vec_env(
            n_envs, ["greedy"], None, seed=seed, round_rewards=True, shaping=shaping
        )
    else:
        venv = DummyVecEnv(
            [lambda: Monitor(run.make_solo("greedy", round_rewards=True)) for _ in range(n_envs)]
        )
    kwargs = dict(ppo or OLD_PPO)
    kwargs["n_steps"] = n_steps
    model = MaskablePPO("MlpPolicy", venv, seed=seed, verbose=0, device="cpu", **kwargs)
    t0 = now()
    model.learn(total_timesteps=timesteps)
    speed = model.num_timesteps / (now() - t0)
    venv.close()
    return speed


def traced_bytes(make, count: int) -> float:
    import gc
    import tracemalloc

    make(1)  # import-time caches and compilation out of the measurement
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = make(count)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del kept
    return (after - before) / count


def section_memory(batch_size: int) -> list[dict]:
    from trash_env.rules import Rules
    from trash_env.solo import TrashSoloEnv
    from trash_env.vector import TrashVecEnv, VectorGame

    batch = VectorGame(Rules(), batch_size, seed=0)

    def vec_env(count: int):
        env = TrashVecEnv(count, ["greedy"], seed=0)
        env.reset()
        return env

    def solos(count: int):
        envs = [TrashSoloEnv(opponents=["greedy"]) for _ in range(count)]
        for i, env in enumerate(envs):
            env.reset(seed=i)
        return envs

    figures = {
        "VectorGame state arrays": batch.memory_bytes() / batch_size,
        "TrashVecEnv (whole, tracemalloc)": traced_bytes(vec_env, batch_size),
        "TrashSoloEnv instance": traced_bytes(solos, 200),
        "trash_env.env() AEC instance": run.env_instance_bytes(200),
    }
    notes = {
        "VectorGame state arrays": f"games + seeds + flags, B={batch_size}, standard rules",
        "TrashVecEnv (whole, tracemalloc)": f"per env, B={batch_size}, vs greedy, after reset",
    }
    return [
        {
            "name": name,
            "unit": "bytes per game",
            "values": [v],
            "median": v,
            "note": notes.get(name, "after reset, tracemalloc over 200"),
        }
        for name, v in figures.items()
    ]


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def table(results: dict) -> str:
    lines = [f"{'section':8s} {'candidate':44s} {'median':>14s} {'unit':>16s} {'x ref':>8s}"]
    for section, rows in results.items():
        for row in rows:
            ratio = row.get("ratio")
            lines.append(
                f"{section:8s} {row['name']:44s} {fmt(row.get('median')):>14s} "
                f"{row['unit']:>16s} {'' if ratio is None else f'{ratio:.2f}x':>8s}"
            )
    return "\n".join(lines)


def ratios_against(rows: list[dict], reference: str) -> None:
    """Each row's ratio to the reference row: this / reference, pair by pair, median."""
    ref = next(r for r in rows if r["name"] == reference)["values"]
    for row in rows:
        if row["name"] == reference:
            row["reference"] = True
            continue
        pairs = [v / r for v, r in zip(row["values"], ref, strict=False) if r > 0]
        if pairs:
            row["ratio"] = statistics.median(pairs)


def rows_of(figures: dict, unit: str, reference: str) -> list[dict]:
    """One table row per benchmark of an interleaved run, each with its ratio to ``reference``."""
    figures.pop("_skipped")
    rows = [
        {"name": k, "unit": unit, "values": v, "median": statistics.median(v)}
        for k, v in figures.items()
    ]
    ratios_against(rows, reference)
    return rows


def write_json(path: Path, data: dict) -> None:
    """Atomically (:func:`trash_env.files.atomic_write_text`), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=1024, help="games per batch (1024)")
    parser.add_argument("--wide-batch", type=int, default=4096, help="cores section (4096)")
    parser.add_argument("--quick", action="store_true", help="4,096 training steps, not 16,384")
    parser.add_argument("--only", default="engine,cores,env,train,memory")
    parser.add_argument("--json", type=Path, default=HERE / "vector.json")
    args = parser.parse_args(argv)
    for name in ("repeats", "batch", "wide_batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    sections = ("engine", "cores", "env", "train", "memory")
    unknown = sorted(set(only) - set(sections))
    if unknown:
        parser.error(
            f"--only: unknown section(s) {', '.join(unknown)}; allowed: {', '.join(sections)}"
        )

    def log(text: str) -> None:
        print(text, flush=True)

    # Compile (or load the compiled kernels) before any timing.
    batched_engine_loop(0.01, 0, 8)
    batched_engine_loop(0.01, 0, 8, parallel=True)
    batched_env_loop(0.01, 0, 8)
    results: dict[str, list[dict]] = {}
    b = args.batch

    def section(name: str, header: str, unit: str, loops: dict, repeats: int) -> None:
        """Time ``loops`` interleaved; the first is the reference the others are rated by."""
        log(header)
        figures = run.interleaved(loops, repeats, log)
        results[name] = rows_of(figures, unit, next(iter(loops)))

    if "engine" in only:
        section(
            "engine",
            "engine: decisions/s",
            "decisions/s",
            {
                "Game.step loop (reference)": lambda rep: run.engine_loop(args.seconds, rep),
                f"VectorGame B={b}": lambda rep: batched_engine_loop(args.seconds, rep, b),
            },
            args.repeats,
        )
    if "cores" in only:
        w = args.wide_batch
        section(
            "cores",
            f"cores: decisions/s at B={w}, one core against {os.cpu_count()}",
            "decisions/s",
            {
                f"VectorGame B={w}, one core (reference)": lambda rep: batched_engine_loop(
                    args.seconds, rep, w, parallel=False
                ),
                f"VectorGame B={w}, every core (prange)": lambda rep: batched_engine_loop(
                    args.seconds, rep, w, parallel=True
                ),
            },
            args.repeats,
        )
    if "env" in only:
        section(
            "env",
            "env: learner steps/s vs greedy",
            "steps/s",
            {
                "TrashSoloEnv (reference)": lambda rep: run.solo_loop(args.seconds, rep),
                f"TrashVecEnv B={b}": lambda rep: batched_env_loop(args.seconds, rep, b),
            },
            args.repeats,
        )
    if "train" in only:
        steps = 4096 if args.quick else 16384
        # The old default (dummy 4 x 512, old PPO settings), the batched env with the same
        # settings (4 x 512; 64 x 32, the earlier batched default), and train.py's new
        # default (its batched path's envs x steps and PPO settings).
        few, n_steps, wide, short = 4, 512, 64, 32
        envs, rollout, ppo, shaping = new_defaults()
        old = f"DummyVecEnv {few} x Monitor(TrashSolo) x {n_steps} steps, old PPO (old default)"
        new = (
            f"TrashVecEnv {envs} x {rollout} steps, new PPO (train.py default: minibatch "
            f"{ppo['batch_size']}, {ppo['n_epochs']} epochs, shaping {shaping:g}, features "
            f"{'pairs' if 'features_extractor_class' in ppo['policy_kwargs'] else 'obs'})"
        )
        earlier = f"TrashVecEnv {wide} envs x {short} steps, old PPO (earlier batched default)"
        section(
            "train",
            f"train: MaskablePPO env steps/s, {steps} steps",
            "env steps/s",
            {
                old: lambda rep: train_batched(steps, few, n_steps, rep, False),
                f"TrashVecEnv {few} envs x {n_steps} steps, old PPO": lambda rep: train_batched(
                    steps, few, n_steps, rep, True
                ),
                earlier: lambda rep: train_batched(steps, wide, short, rep, True),
                f"DummyVecEnv {wide} x Monitor(TrashSolo) x {short} steps, old PPO": lambda rep: (
                    train_batched(steps, wide, short, rep, False)
                ),
                new: lambda rep: train_batched(
                    max(steps, 4 * envs * rollout), envs, rollout, rep, True, ppo, shaping
                ),
            },
            max(1, min(args.repeats, 3)),
        )
    if "memory" in only:
        log("memory: bytes per game")
        results["memory"] = section_memory(b)
    print()
    print(table(results))
    meta = {
        "command": "python benchmarks/vector.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    data = {"meta": meta, "sections": results}
    try:  # measured by whole train.py runs (docs/vector.md), not by this script: kept
        kept = json.loads(args.json.read_text()).get("parity")
    except (OSError, ValueError):
        kept = None
    if kept is not None:
        data["parity"] = kept
    write_json(args.json, data)
    print(f"\nwritten: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
