"""The JAX engine (``trash_env.jax_env``) against the numba engine and Pgx's card games, in one run.

    python benchmarks/jax_engine.py [--batches 1,16,256,4096,65536] [--seconds 2]
                                    [--repeats 1] [--pgx kuhn_poker,leduc_holdem]
                                    [--json PATH]

Every row is decisions per second *with observations*: random legal actions, each step
computing the observation of the player to act, finished games re-dealt in the step.

- ``jax``: ``jax.vmap`` of ``auto_reset(env.step, env.init)`` (standard rules, plain
  observation) with ``bots.random_action``, ``--chunk`` steps per compiled ``lax.scan``;
- ``numba``: a ``VectorGame`` of the same batch: ``batch_random_actions``, ``step(...,
  autoreset=True)`` and ``observations()`` per step (not compiled together: three calls);
- ``pgx:<id>``: the same scan over ``pgx.make(id)`` with Pgx's ``auto_reset`` and
  ``act_randomly``, where Pgx is installed.

Compilation is timed apart (``compile_s``: the first call of each compiled scan) and left out
of the rates. The machine, the devices and the load are written with the figures.
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


def scan_runner(init: Callable, step: Callable, act: Callable, batch: int, chunk: int) -> tuple:
    """A compiled ``chunk``-step scan over a batch, and its first state."""

    def run(state: object, key: jax.Array) -> tuple:
        def body(carry: tuple, _: None) -> tuple:
            state, key = carry
            key, k_act, k_step = jax.random.split(key, 3)
            action = act(k_act, state.legal_action_mask)
            state = jax.vmap(step)(state, action, jax.random.split(k_step, batch))
            return (state, key), state.observation[0, 0]

        (state, key), _ = jax.lax.scan(body, (state, key), None, length=chunk)
        return state, key

    state = jax.jit(jax.vmap(init))(jax.random.split(jax.random.PRNGKey(0), batch))
    return jax.jit(run, donate_argnums=0), state


def _uniform(key: jax.Array, mask: jax.Array) -> jax.Array:
    logits = jnp.where(mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits, axis=-1)


def measure_scan(init: Callable, step: Callable, batch: int, chunk: int, seconds: float) -> dict:
    runner, state = scan_runner(init, step, _uniform, batch, chunk)
    key = jax.random.PRNGKey(1)
    start = now()
    state, key = runner(state, key)
    jax.block_until_ready(state)
    compile_s = now() - start
    steps, start = 0, now()
    while now() - start < seconds:
        state, key = runner(state, key)
        jax.block_until_ready(state)
        steps += chunk
    return {"decisions_per_s": steps * batch / (now() - start), "compile_s": compile_s}


def measure_jax(batch: int, chunk: int, seconds: float) -> dict:
    from trash_env.jax_env import auto_reset, make

    env = make()
    return measure_scan(env.init, auto_reset(env.step, env.init), batch, chunk, seconds)


def measure_pgx(env_id: str, batch: int, chunk: int, seconds: float) -> dict:
    import pgx
    from pgx.experimental import auto_reset as pgx_auto_reset

    env = pgx.make(env_id)
    return measure_scan(env.init, pgx_auto_reset(env.step, env.init), batch, chunk, seconds)


def measure_numba(batch: int, seconds: float) -> dict:
    from trash_env.rules import Rules
    from trash_env.vector import VectorGame
    from trash_env.vector import _kernels as K

    games = VectorGame(Rules(), batch, seed=0)
    words = np.random.default_rng(0).integers(0, 2**64, size=(batch, 6), dtype=np.uint64)
    words[:, 3] |= np.uint64(1)
    words[:, 4:] = 0
    actions = np.zeros(batch, np.int64)
    start = now()  # the kernels' first calls compile them (or load numba's cache)
    out = games.observations()
    K.batch_random_actions(games.games, words, actions)
    games.step(actions, autoreset=True)
    compile_s = now() - start
    steps, start = 0, now()
    while now() - start < seconds:
        for _ in range(8):
            K.batch_random_actions(games.games, words, actions)
            games.step(actions, autoreset=True)
            games.observations(out=out)
        steps += 8
    return {"decisions_per_s": steps * batch / (now() - start), "compile_s": compile_s}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", default="1,16,256,4096,65536")
    parser.add_argument("--seconds", type=float, default=2.0, help="per row and batch")
    parser.add_argument("--chunk", type=int, default=64, help="steps per compiled scan")
    parser.add_argument("--pgx", default="kuhn_poker,leduc_holdem", help="'' for none")
    parser.add_argument("--no-numba", action="store_true", help="leave the numba row out")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",") if b]
    rows: list[dict] = []
    candidates: list[tuple[str, Callable[[int], dict]]] = [
        ("jax", lambda b: measure_jax(b, args.chunk, args.seconds))
    ]
    if not args.no_numba:
        try:
            import numba  # noqa: F401

            candidates.append(("numba", lambda b: measure_numba(b, args.seconds)))
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
        candidates.append(
            (f"pgx:{env_id}", lambda b, e=env_id: measure_pgx(e, b, args.chunk, args.seconds))
        )
    for batch in batches:
        for name, measure in candidates:
            figures = measure(batch)
            rows.append({"engine": name, "batch": batch, **figures})
            print(
                f"{name:>18}  batch {batch:>6}  {figures['decisions_per_s']:>14,.0f} decisions/s"
                f"  (compile {figures['compile_s']:.1f} s)",
                flush=True,
            )
    best = {}
    for row in rows:
        if row["decisions_per_s"] > best.get(row["engine"], {}).get("decisions_per_s", 0):
            best[row["engine"]] = row
    for name, row in best.items():
        print(f"best {name}: {row['decisions_per_s']:,.0f} decisions/s at batch {row['batch']}")
    result = {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load": os.getloadavg(),
            "jax": jax.__version__,
            "devices": [str(d) for d in jax.devices()],
        },
        "rows": rows,
        "best": {
            k: {"batch": v["batch"], "decisions_per_s": v["decisions_per_s"]}
            for k, v in best.items()
        },
    }
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
