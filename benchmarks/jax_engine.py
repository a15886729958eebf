"""The JAX engine (``trash_env.jax_env``) against the numba engine and Pgx's card games, in one run.

    python benchmarks/jax_engine.py [--batches 1,16,256,4096,65536] [--seconds 2]
                                    [--repeats 1] [--pgx kuhn_poker,leduc_holdem]
                                    [--chunk 64] [--no-numba] [--cpu-devices N]
                                    [--compile-only] [--json PATH]

Every row is decisions per second *with observations*: random legal actions, each step
computing the observation of the player to act, finished games re-dealt in the step.

- ``jax``: ``jax.vmap`` of ``auto_reset(env.step, env.init)`` (standard rules, plain
  observation), a uniform random legal action per game, ``--chunk`` steps per compiled
  ``lax.scan``;
- ``jax/N`` (``--cpu-devices N``): the same scan with the batch split between N CPU devices
  (``jax_num_cpu_devices``, set by this script, never by the library), one thread each, as
  the numba kernels use every core;
- ``numba``: a ``VectorGame`` of the same batch: ``batch_random_actions``, ``step(...,
  autoreset=True)`` and ``observations()`` per step (not compiled together: three calls);
- ``pgx:<id>``: the same scan over ``pgx.make(id)`` with Pgx's ``auto_reset`` and the same
  random action draw, where Pgx is installed.

Compilation is timed apart (``compile_s``: the first calls of the batch's ``init`` and of the
compiled scan, so init and step compiled for one batch size) and left out of the rates; the
JAX engine's compile time is printed over Pgx ``leduc_holdem``'s, same batch, same run
(``--compile-only`` measures only that). ``cpu_per_wall`` is the CPU seconds the process
used per second measured (how many cores the row kept busy). With ``--repeats R`` every row
is measured R times, the rows of a batch taking turns (so that a change in the machine's load
falls on every row alike); a row's ``decisions_per_s`` is the median of its repeats, all of
them in ``repeats``. The machine, the devices and the load (before and after) are written
with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

now = time.perf_counter


def scan_runner(
    init: Callable, step: Callable, act: Callable, batch: int, chunk: int, devices: int = 1
) -> tuple:
    """A compiled ``chunk``-step scan over a batch, and its first state (a key per device).
    With ``devices`` > 1 the batch is split between that many CPU devices (``shard_map``:
    each runs the same scan on its share of the games, on its own thread, with no exchange
    between them)."""
    from trash_env.jax_env import threefry  # here: importing it may start jax's backend

    local = batch // devices

    def run(state: object, keys: jax.Array) -> tuple:
        def body(carry: tuple, _: None) -> tuple:
            state, key = carry
            key, k_act, k_step = threefry.split_n(key, 3)
            action = act(k_act, state.legal_action_mask)
            state = jax.vmap(step)(state, action, threefry.split_n(k_step, local))
            return (state, key), state.observation[0, 0]

        (state, key), _ = jax.lax.scan(body, (state, keys[0]), None, length=chunk)
        return state, key[None]

    # The keys first, outside the timing: the first row would pay jax's start and the
    # compilation of its key functions for every row after it.
    init_keys = jax.block_until_ready(jax.random.split(jax.random.PRNGKey(0), batch))
    keys = jax.block_until_ready(jax.random.split(jax.random.PRNGKey(1), devices))
    start, cpu = now(), time.process_time()
    state = jax.jit(jax.vmap(init))(init_keys)
    jax.block_until_ready(state)
    init_s = (now() - start, time.process_time() - cpu)
    if devices > 1:
        from jax.sharding import NamedSharding, PartitionSpec

        mesh = jax.make_mesh((devices,), ("games",), devices=jax.devices()[:devices])
        games = PartitionSpec("games")
        run = jax.shard_map(
            run, mesh=mesh, in_specs=(games, games), out_specs=(games, games), check_vma=False
        )
        state, keys = jax.device_put((state, keys), NamedSharding(mesh, games))
    return jax.jit(run, donate_argnums=0), state, keys, init_s


def _uniform(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniform legal action per game from one random 32-bit word each: the ``r``-th legal
    action, ``r = count * u`` for ``u`` the word's top 28 bits as a fraction (within
    ``count / 2**28`` of uniform). Written to stay small beside the engine's step: one hash
    lane a game, and the ``r``-th legal action found in one pass over the 13 actions
    (``jax.random.randint`` hashes twice in ``jax.random``'s loop, a cumulative sum is a
    reduce-window on the CPU; ``jax.random.categorical`` over the mask, a tenth of the step at
    batch 65,536, draws a float per action)."""
    from trash_env.jax_env import threefry

    count = mask.sum(axis=-1).astype(jnp.uint32)
    r = ((threefry.bits(key, count.shape[0]) >> 4) * count) >> 28
    chosen = jnp.zeros(count.shape, jnp.int32)
    seen = jnp.zeros(count.shape, jnp.uint32)  # legal actions before this one
    for action in range(mask.shape[-1]):
        legal = mask[..., action]
        chosen = jnp.where(legal & (seen == r), action, chosen)
        seen = seen + legal
    return chosen


Window = Callable[[float], float]


def prepare_scan(
    init: Callable, step: Callable, batch: int, chunk: int, devices: int = 1
) -> tuple[tuple[float, float], Window]:
    """The batch's ``init`` and the scan compiled (their first calls, timed together: the
    compile time) and a function that runs the scan for some seconds and returns the
    decisions per second. The compile time is given as wall and CPU seconds (the CPU
    seconds vary less with the machine's load)."""
    runner, state, keys, init_s = scan_runner(init, step, _uniform, batch, chunk, devices)
    carry = [state, keys]
    start, cpu = now(), time.process_time()
    carry[:] = runner(*carry)
    jax.block_until_ready(carry)
    compile_s = (init_s[0] + now() - start, init_s[1] + time.process_time() - cpu)

    def window(seconds: float) -> float:
        steps, start = 0, now()
        while now() - start < seconds:
            carry[:] = runner(*carry)
            jax.block_until_ready(carry)
            steps += chunk
        return steps * batch / (now() - start)

    return compile_s, window


def prepare_jax(batch: int, chunk: int, devices: int = 1) -> tuple[tuple[float, float], Window]:
    from trash_env.jax_env import auto_reset, make

    env = make()
    return prepare_scan(env.init, auto_reset(env.step, env.init), batch, chunk, devices)


def prepare_pgx(env_id: str, batch: int, chunk: int) -> tuple[tuple[float, float], Window]:
    import pgx
    from pgx.experimental import auto_reset as pgx_auto_reset

    env = pgx.make(env_id)
    return prepare_scan(env.init, pgx_auto_reset(env.step, env.init), batch, chunk)


def prepare_numba(batch: int) -> tuple[tuple[float, float], Window]:
    from trash_env.rules import Rules
    from trash_env.vector import VectorGame
    from trash_env.vector import _kernels as K

    games = VectorGame(Rules(), batch, seed=0)
    words = np.random.default_rng(0).integers(0, 2**64, size=(batch, 6), dtype=np.uint64)
    words[:, 3] |= np.uint64(1)
    words[:, 4:] = 0
    actions = np.zeros(batch, np.int64)
    start, cpu = now(), time.process_time()  # the first calls compile (or load numba's cache)
    out = games.observations()
    K.batch_random_actions(games.games, words, actions)
    games.step(actions, autoreset=True)
    compile_s = (now() - start, time.process_time() - cpu)

    def window(seconds: float) -> float:
        steps, start = 0, now()
        while now() - start < seconds:
            for _ in range(8):
                K.batch_random_actions(games.games, words, actions)
                games.step(actions, autoreset=True)
                games.observations(out=out)
            steps += 8
        return steps * batch / (now() - start)

    return compile_s, window


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", default="1,16,256,4096,65536")
    parser.add_argument("--seconds", type=float, default=2.0, help="per row and batch")
    parser.add_argument("--repeats", type=int, default=1, help="measurements of each row")
    parser.add_argument("--chunk", type=int, default=64, help="steps per compiled scan")
    parser.add_argument("--pgx", default="kuhn_poker,leduc_holdem", help="'' for none")
    parser.add_argument("--no-numba", action="store_true", help="leave the numba row out")
    parser.add_argument(
        "--cpu-devices",
        type=int,
        default=1,
        help="also a 'jax/N' row: the batch split between N CPU devices, one thread each",
    )
    parser.add_argument(
        "--compile-only", action="store_true", help="time the compilations, run nothing"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, not {args.repeats}")
    if args.cpu_devices < 1:
        parser.error(f"--cpu-devices must be at least 1, not {args.cpu_devices}")
    if args.cpu_devices > 1:  # before jax starts its CPU backend
        jax.config.update("jax_num_cpu_devices", args.cpu_devices)
    batches = [int(b) for b in args.batches.split(",") if b]
    rows: list[dict] = []
    load_before = os.getloadavg()
    candidates: list[tuple[str, Callable[[int], tuple[tuple[float, float], Window]]]] = [
        ("jax", lambda b: prepare_jax(b, args.chunk))
    ]
    if args.cpu_devices > 1:
        candidates.append(
            (f"jax/{args.cpu_devices}", lambda b: prepare_jax(b, args.chunk, args.cpu_devices))
        )
    if not args.no_numba:
        try:
            import numba  # noqa: F401

            candidates.append(("numba", prepare_numba))
        except ImportError:
            print("numba is not installed: no numba row")
    pgx_ids = [e for e in args.pgx.split(",") if e]
    try:
        import pgx  # noqa: F401
    except ImportError:
        if pgx_ids:
            print("pgx is not installed: no pgx rows")
        pgx_ids = []
    for env_id in pgx_ids:
        candidates.append((f"pgx:{env_id}", lambda b, e=env_id: prepare_pgx(e, b, args.chunk)))
    compile_ratios: dict[int, dict[str, float]] = {}
    for batch in batches:
        prepared = {}
        for name, prepare in candidates:
            if name.startswith("jax/") and batch % args.cpu_devices != 0:
                continue
            # A compilation takes seconds (Pgx's) to minutes (the JAX engine's, on a loaded
            # 2-core CPU): said before it starts.
            print(f"{name:>18}  batch {batch:>6}  compiling init and step ...", flush=True)
            prepared[name] = prepare(batch)
        rates: dict[str, list[float]] = {name: [] for name in prepared}
        cores: dict[str, list[float]] = {name: [] for name in prepared}
        for _ in range(0 if args.compile_only else args.repeats):
            for name, (_, window) in prepared.items():
                cpu, wall = time.process_time(), now()
                rates[name].append(window(args.seconds))
                cores[name].append((time.process_time() - cpu) / (now() - wall))
        for name, ((compile_s, compile_cpu_s), _) in prepared.items():
            if not rates[name]:  # --compile-only
                rows.append(
                    {
                        "engine": name,
                        "batch": batch,
                        "compile_s": compile_s,
                        "compile_cpu_s": compile_cpu_s,
                    }
                )
                print(
                    f"{name:>18}  batch {batch:>6}  compile {compile_s:.1f} s "
                    f"({compile_cpu_s:.1f} CPU s)",
                    flush=True,
                )
                continue
            rate = float(np.median(rates[name]))
            rows.append(
                {
                    "engine": name,
                    "batch": batch,
                    "decisions_per_s": rate,
                    "repeats": rates[name],
                    "cpu_per_wall": float(np.median(cores[name])),
                    "compile_s": compile_s,
                    "compile_cpu_s": compile_cpu_s,
                }
            )
            spread = (
                f" [{min(rates[name]):,.0f} to {max(rates[name]):,.0f}]"
                if len(rates[name]) > 1
                else ""
            )
            print(
                f"{name:>18}  batch {batch:>6}  {rate:>14,.0f} decisions/s{spread}"
                f"  (compile {compile_s:.1f} s, {np.median(cores[name]):.2f} CPU s per s)",
                flush=True,
            )
        if "jax" in prepared and "pgx:leduc_holdem" in prepared:
            (wall, cpu), (peer_wall, peer_cpu) = (
                prepared["jax"][0],
                prepared["pgx:leduc_holdem"][0],
            )
            compile_ratios[batch] = {"wall": wall / peer_wall, "cpu": cpu / peer_cpu}
            print(
                f"compile (init and step) at batch {batch}: jax {wall:.1f} s ({cpu:.1f} CPU s), "
                f"pgx:leduc_holdem {peer_wall:.1f} s ({peer_cpu:.1f} CPU s): "
                f"{wall / peer_wall:.1f}x wall, {cpu / peer_cpu:.1f}x CPU (goal: at most 3x)",
                flush=True,
            )
        del prepared
    best = {}
    for row in rows:
        if row.get("decisions_per_s", 0) > best.get(row["engine"], {}).get("decisions_per_s", 0):
            best[row["engine"]] = row
    for name, row in best.items():
        print(f"best {name}: {row['decisions_per_s']:,.0f} decisions/s at batch {row['batch']}")
    ratio = None
    if "jax" in best and "numba" in best:
        ratio = best["numba"]["decisions_per_s"] / best["jax"]["decisions_per_s"]
        print(f"numba best / jax best: {ratio:.2f} (goal: at most 4)")
    split = f"jax/{args.cpu_devices}"
    split_ratio = None
    if split in best and "numba" in best:  # numba's kernels run on every core, as this row
        split_ratio = best["numba"]["decisions_per_s"] / best[split]["decisions_per_s"]
        print(f"numba best / {split} best: {split_ratio:.2f}")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load": os.getloadavg(),
            "jax": jax.__version__,
            "devices": [str(d) for d in jax.devices()],
        },
        "rows": rows,
        "best": {
            k: {"batch": v["batch"], "decisions_per_s": v["decisions_per_s"]}
            for k, v in best.items()
        },
        "numba_best_over_jax_best": ratio,
        "numba_best_over_split_jax_best": split_ratio,
        "compile_over_leduc_holdem": compile_ratios,
    }
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
