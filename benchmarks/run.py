"""Speed and memory of trash-env, side by side with the environments researchers already use.

    python benchmarks/run.py [--repeats 5] [--seconds 2] [--only aec,engine] [--json PATH] [--quick]

Sections (``--only`` takes a comma-separated list of these names):

- ``aec``: agent steps/s of ``trash_env.env()`` under the loop of
  ``pettingzoo.test.performance_benchmark`` (reset, ``last()``, ``step()`` with a random legal
  action from the mask), and the same loop over PettingZoo's ``tictactoe_v3``,
  ``connect_four_v3``, ``leduc_holdem_v4`` and ``texas_holdem_v4``; OpenSpiel's ``leduc_poker``
  and ``gin_rummy`` through ``pyspiel`` (legal actions, the observation tensor, apply; chance
  nodes are sampled but only player decisions count as steps).
- ``engine``: decisions/s of ``trash_env.engine.Game`` with random choices and no observations,
  against ``pyspiel`` ``leduc_poker`` with no tensors (same counting).
- ``solo``: steps/s of the single-agent env (``TrashSolo`` against ``greedy``), random learner
  actions.
- ``train``: MaskablePPO training steps/s and the share of its time spent in the environment
  (the VecEnv's ``step_wait``, ``reset`` and ``env_method("action_masks")`` are timed).
- ``eval``: games/s of the evaluation (greedy against greedy) with 1 and 2 workers.
- ``memory``: bytes per live ``trash_env.env()`` instance after ``reset`` (tracemalloc over 1,000
  instances) and the peak RSS of a child process running a 100,000-game evaluation
  (``--quick``: 2,000 games; the output says which was run).

Every repetition measures the peers of a section interleaved (trash-env, then each peer, for
``--seconds`` each), so that the ratio trash-env / peer is taken pair by pair under the same load;
the medians over the repetitions are reported. The machine is shared: absolute figures drift,
ratios hold. Sections whose module does not exist (yet) are skipped and say so.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from trash_env.files import atomic_write_text  # noqa: E402

SECTIONS = ("aec", "engine", "solo", "train", "eval", "memory")
now = time.perf_counter


class Skip(Exception):
    """A section (or one peer) cannot run here; the message says why."""


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        raise Skip(f"module {error.name} not found") from None


# ---------------------------------------------------------------------- the measuring loops


def aec_loop(make_env: Callable, seconds: float, seed: int) -> float:
    """Agent steps/s: the loop of ``pettingzoo.test.performance_benchmark`` (every agent once per
    cycle, ``last()``, a random legal action from the mask, reset when all are done), with a
    seeded ``random.Random`` instead of the global one."""
    env = make_env()
    choice = random.Random(seed).choice
    turn = 0
    env.reset(seed=seed)
    start = now()
    while True:
        for agent in env.agent_iter(env.num_agents):
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            elif isinstance(obs, dict) and "action_mask" in obs:
                action = choice(np.flatnonzero(obs["action_mask"]).tolist())
            elif "action_mask" in info:
                action = choice(np.flatnonzero(info["action_mask"]).tolist())
            else:
                action = env.action_space(agent).sample()
            env.step(action)
            turn += 1
            if all(env.terminations.values()) or all(env.truncations.values()):
                env.reset()
        elapsed = now() - start
        if elapsed > seconds:
            env.close()
            return turn / elapsed


def sample_outcome(outcomes: list[tuple[int, float]], x: float) -> int:
    """The chance outcome that the uniform number ``x`` falls on."""
    for outcome, p in outcomes:
        x -= p
        if x < 0.0:
            return outcome
    return outcomes[-1][0]


def spiel_loop(name: str, seconds: float, seed: int, tensor: bool) -> float:
    """Player decisions/s of an OpenSpiel game through pyspiel: chance outcomes are sampled (not
    counted); at each decision the legal actions, (``tensor``) the acting player's observation
    tensor (information-state tensor if the game has no observation tensor), then apply."""
    pyspiel = _import("pyspiel")
    game = pyspiel.load_game(name)
    use_obs = game.get_type().provides_observation_tensor
    rnd = random.Random(seed)
    uniform, choice = rnd.random, rnd.choice
    steps = 0
    start = now()
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_outcome(state.chance_outcomes(), uniform()))
                continue
            legal = state.legal_actions()
            if tensor:
                player = state.current_player()
                if use_obs:
                    state.observation_tensor(player)
                else:
                    state.information_state_tensor(player)
                action = choice(legal)
            else:
                action = legal[int(uniform() * len(legal))]
            state.apply_action(action)
            steps += 1
        elapsed = now() - start
        if elapsed > seconds:
            return steps / elapsed


def engine_loop(seconds: float, seed: int, game_class: type | None = None) -> float:
    """Decisions/s of the rules engine alone: random legal choices, no observations, a new
    ``Game`` per game (same chooser as the pyspiel engine-only loop)."""
    from trash_env.engine import Game
    from trash_env.rules import Rules

    Game = game_class or Game  # noqa: N806 - benchmarks/compare.py passes another version

    rules = Rules()
    uniform = random.Random(seed).random
    steps = 0
    game_seed = seed * 1_000_003
    start = now()
    while True:
        game = Game(rules, seed=game_seed)
        game_seed += 1
        while not game.done:
            legal = game.legal_actions()
            game.step(legal[int(uniform() * len(legal))])
            steps += 1
        elapsed = now() - start
        if elapsed > seconds:
            return steps / elapsed


def interleaved(
    candidates: dict[str, Callable[[int], float]], repeats: int, log: Callable[[str], None]
) -> dict[str, list[float]]:
    """Run every candidate once per repetition, in turn; a candidate that raises Skip is dropped
    (and reported as skipped by the caller)."""
    figures: dict[str, list[float]] = {name: [] for name in candidates}
    skipped: dict[str, str] = {}
    for rep in range(repeats):
        for name, measure in candidates.items():
            if name in skipped:
                continue
            try:
                figures[name].append(measure(rep))
            except Skip as why:
                skipped[name] = str(why)
                continue
            log(f"  rep {rep + 1}/{repeats} {name:28s} {figures[name][-1]:>12,.0f}")
    for name, why in skipped.items():
        figures[name] = []
        log(f"  {name}: skipped ({why})")
    figures["_skipped"] = skipped  # type: ignore[assignment]
    return figures


def ratio_rows(figures: dict, reference: str, unit: str, peers_note: dict[str, str]) -> list[dict]:
    """One row per candidate: median figure, and the median over repetitions of the pair-by-pair
    ratio reference / candidate."""
    rows = []
    ref = figures.get(reference, [])
    for name, values in figures.items():
        if name.startswith("_"):
            continue
        row = {"name": name, "unit": unit, "values": values, "note": peers_note.get(name, "")}
        if not values:
            row["skipped"] = figures["_skipped"].get(name, "no measurement")
            rows.append(row)
            continue
        row["median"] = statistics.median(values)
        if name == reference:
            row["reference"] = True
        elif ref:
            pairs = [a / b for a, b in zip(ref, values, strict=False) if b > 0]
            row["ratio"] = statistics.median(pairs)  # the section's reference / this
        rows.append(row)
    return rows


# ---------------------------------------------------------------------- sections


def trash_env_factory() -> Callable:
    """``trash_env.env`` (the wrapped AEC env), or Skip if the env module does not exist yet."""
    module = _import("trash_env")
    make = getattr(module, "env", None)
    if make is None or not callable(make):
        env_module = _import("trash_env.env")
        make = getattr(env_module, "env", None)
    if make is None or not callable(make):
        raise Skip("trash_env.env() not found")
    return make


def section_aec(args, log) -> dict:
    make_trash = trash_env_factory()
    peers: dict[str, Callable[[int], float]] = {
        "trash-env": lambda rep: aec_loop(make_trash, args.seconds, rep)
    }

    def pz(module_name: str) -> Callable[[int], float]:
        def measure(rep: int) -> float:
            module = _import(f"pettingzoo.classic.{module_name}")
            return aec_loop(module.env, args.seconds, rep)

        return measure

    for name in ("tictactoe_v3", "connect_four_v3", "leduc_holdem_v4", "texas_holdem_v4"):
        peers[name] = pz(name)
    for name in ("leduc_poker", "gin_rummy"):
        peers[f"pyspiel {name}"] = lambda rep, name=name: spiel_loop(
            name, args.seconds, rep, tensor=True
        )
    figures = interleaved(peers, args.repeats, log)
    notes = {
        "trash-env": "trash_env.env(), PettingZoo performance_benchmark loop",
        "pyspiel leduc_poker": "legal actions + observation tensor + apply; decisions only",
        "pyspiel gin_rummy": "legal actions + observation tensor + apply; decisions only",
    }
    rows = ratio_rows(figures, "trash-env", "agent steps/s", notes)
    return {"rows": rows, "reference": "trash-env"}


def section_engine(args, log) -> dict:
    _import("trash_env.engine")
    peers = {
        "trash-env engine": lambda rep: engine_loop(args.seconds, rep),
        "pyspiel leduc_poker (no tensor)": lambda rep: spiel_loop(
            "leduc_poker", args.seconds, rep, tensor=False
        ),
    }
    figures = interleaved(peers, args.repeats, log)
    notes = {
        "trash-env engine": "Game.legal_actions + step, random choice, new Game per game",
        "pyspiel leduc_poker (no tensor)": "chance nodes sampled, only decisions counted",
    }
    return {"rows": ratio_rows(figures, "trash-env engine", "decisions/s", notes)}


def make_solo(opponent: str = "greedy", **options):
    """The single-agent env (``trash_env.solo.TrashSoloEnv``) against ``opponent``."""
    solo = _import("trash_env.solo")
    cls = getattr(solo, "TrashSoloEnv", None) or getattr(solo, "TrashSolo", None)
    if cls is None:
        raise Skip("trash_env.solo has no TrashSoloEnv")
    _import("agents.bots.heuristics")  # the greedy bot
    return cls(opponents=(opponent,), **options)


def solo_loop(seconds: float, seed: int) -> float:
    env = make_solo("greedy")
    rnd = random.Random(seed)
    choice = rnd.choice
    env.reset(seed=seed)
    steps = 0
    start = now()
    while True:
        for _ in range(100):
            mask = env.action_masks()
            _, _, terminated, truncated, _ = env.step(choice(np.flatnonzero(mask).tolist()))
            steps += 1
            if terminated or truncated:
                env.reset()
        elapsed = now() - start
        if elapsed > seconds:
            env.close()
            return steps / elapsed


def section_solo(args, log) -> dict:
    make_solo("greedy")  # Skip early if the module does not exist yet
    figures = interleaved(
        {"TrashSolo vs greedy": lambda rep: solo_loop(args.seconds, rep)}, args.repeats, log
    )
    notes = {"TrashSolo vs greedy": "random legal learner actions; greedy opponents in step()"}
    return {"rows": ratio_rows(figures, "TrashSolo vs greedy", "learner steps/s", notes)}


def train_once(timesteps: int, n_envs: int, seed: int) -> dict:
    """MaskablePPO as train.py sets it up (DummyVecEnv of ``n_envs`` Monitor-wrapped TrashSolo
    envs with per-deal rewards, train.py's hyper-parameters) but against greedy only; the time
    in the env (step_wait, reset, action masks) against the whole of ``learn``."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv = DummyVecEnv(
        [lambda: Monitor(make_solo("greedy", round_rewards=True)) for _ in range(n_envs)]
    )
    spent = [0.0]

    def timed(method, total: list[float]):
        def wrapper(*a, **k):
            t0 = now()
            try:
                return method(*a, **k)
            finally:
                total[0] += now() - t0

        return wrapper

    venv.step_wait = timed(venv.step_wait, spent)
    venv.reset = timed(venv.reset, spent)
    venv.env_method = timed(venv.env_method, spent)
    # The same time without SB3's plumbing (Monitor, DummyVecEnv's buffers and info copies):
    # the TrashSoloEnv methods alone.
    inner = [0.0]
    for monitor in venv.envs:
        solo = monitor.unwrapped
        for name in ("step", "reset", "action_masks"):
            setattr(solo, name, timed(getattr(solo, name), inner))
    model = MaskablePPO("MlpPolicy", venv, seed=seed, verbose=0, device="cpu", **train_kwargs())
    t0 = now()
    model.learn(total_timesteps=timesteps)
    total = now() - t0
    steps = model.num_timesteps
    venv.close()
    return {
        "steps_per_s": steps / total,
        "env_share": spent[0] / total,
        "solo_share": inner[0] / total,
        "steps": steps,
    }


def train_kwargs() -> dict:
    """MaskablePPO hyper-parameters of ``train.py``'s defaults (its argument parser), or {}
    (SB3's defaults) if train.py is not there."""
    try:
        train = importlib.import_module("train")
        args = train.build_parser().parse_args([])
    except Exception:  # noqa: BLE001 - any failure means: use SB3's defaults
        return {}
    return {
        "learning_rate": args.lr,
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "n_epochs": args.epochs,
        "gamma": args.gamma,
        "gae_lambda": 0.95,
        "ent_coef": args.ent_coef,
        "policy_kwargs": {"net_arch": [int(x) for x in args.net.split(",")]},
    }


def section_train(args, log) -> dict:
    make_solo("greedy")
    _import("sb3_contrib")
    timesteps = 4096 if args.quick else 16384
    results = []
    for rep in range(max(1, min(args.repeats, 3))):
        r = train_once(timesteps, 4, rep)
        results.append(r)
        log(
            f"  rep {rep + 1}: {r['steps_per_s']:,.0f} steps/s, env {100 * r['env_share']:.1f}% "
            f"(TrashSoloEnv alone {100 * r['solo_share']:.1f}%)"
        )
    share = [r["env_share"] for r in results]
    solo_share = [r["solo_share"] for r in results]
    speed = [r["steps_per_s"] for r in results]
    kwargs = train_kwargs()
    note = (
        f"MaskablePPO MlpPolicy, 4 DummyVecEnv x Monitor(TrashSolo vs greedy), {timesteps} steps, "
        f"{'train.py hyper-parameters' if kwargs else 'SB3 default hyper-parameters'}"
    )
    return {
        "rows": [
            {
                "name": "MaskablePPO training",
                "unit": "env steps/s",
                "values": speed,
                "median": statistics.median(speed),
                "note": note,
            },
            {
                "name": "env share of training time",
                "unit": "fraction",
                "values": share,
                "median": statistics.median(share),
                "note": "the VecEnv's step_wait + reset + env_method (action masks)",
            },
            {
                "name": "TrashSoloEnv share of training time",
                "unit": "fraction",
                "values": solo_share,
                "median": statistics.median(solo_share),
                "note": "TrashSoloEnv.step + reset + action_masks alone (no Monitor, no VecEnv)",
            },
        ]
    }


def eval_games_per_s(games: int, workers: int, seed: int, engine: str = "reference") -> float:
    t0 = now()
    run_evaluation(games, workers, seed, engine)
    return games / (now() - t0)


def run_evaluation(games: int, workers: int, seed: int, engine: str = "reference"):
    """``agents.evaluation.evaluate(["greedy"], ...)``: greedy in both seats of a 2-player
    game, duplicate deals, no progress bar (worker start-up included in the time), on the
    reference engine unless ``engine`` says otherwise (benchmarks/evaluate_speed.py compares
    the two engines in whole processes)."""
    evaluation = _import("agents.evaluation")
    _import("agents.bots.heuristics")
    return evaluation.evaluate(["greedy"], games=games, seed=seed, workers=workers, engine=engine)


def section_eval(args, log) -> dict:
    _import("agents.evaluation")
    games = 1000 if args.quick else 10_000
    peers = {
        "evaluation 1 worker": lambda rep: eval_games_per_s(games, 1, rep),
        "evaluation 2 workers": lambda rep: eval_games_per_s(games, 2, rep),
    }
    figures = interleaved(peers, max(1, min(args.repeats, 3)), log)
    rows = ratio_rows(
        figures,
        "evaluation 2 workers",
        "games/s",
        {"evaluation 1 worker": f"greedy vs greedy, 2 players, {games} games"},
    )
    return {"rows": rows}


def env_instance_bytes(count: int = 1000) -> float:
    """Bytes per live ``trash_env.env()`` after reset (tracemalloc, ``count`` instances)."""
    import gc
    import tracemalloc

    make = trash_env_factory()
    warm = make()
    warm.reset(seed=0)  # import-time caches out of the measurement
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    envs = []
    for i in range(count):
        env = make()
        env.reset(seed=i)
        envs.append(env)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / count


_PEAK_CHILD = """
import resource, sys
sys.path.insert(0, {root!r})
sys.path.insert(0, {bench!r})
from run import run_evaluation

def peak_kib():
    # VmHWM: this address space's peak. ru_maxrss would survive exec and report the size
    # of the benchmark process this child was forked from (torch loaded by then).
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    run_evaluation({games}, {workers}, 0)
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(peak_kib(), child_kb)
"""


def evaluation_peak(games: int, workers: int) -> dict:
    """Peak RSS of a child process running a ``games``-game evaluation (VmHWM, or ru_maxrss
    off Linux), and of the largest of its worker processes (ru_maxrss of its children)."""
    import tempfile

    code = _PEAK_CHILD.format(
        root=str(ROOT), bench=str(ROOT / "benchmarks"), games=games, workers=workers
    )
    t0 = now()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "peak_child.py"
        script.write_text(code)
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=False
        )
    if out.returncode != 0:
        raise Skip(f"evaluation child failed: {out.stderr.strip().splitlines()[-1:]}")
    self_kb, child_kb = map(int, out.stdout.split()[-2:])
    return {"self_bytes": self_kb * 1024, "worker_bytes": child_kb * 1024, "seconds": now() - t0}


def section_memory(args, log) -> dict:
    rows = []
    try:
        per_env = [env_instance_bytes(1000) for _ in range(max(1, min(args.repeats, 3)))]
        rows.append(
            {
                "name": "bytes per live env",
                "unit": "bytes",
                "values": per_env,
                "median": statistics.median(per_env),
                "note": "tracemalloc, 1,000 trash_env.env() after reset",
            }
        )
        log(f"  bytes per env: {statistics.median(per_env):,.0f}")
    except Skip as why:
        rows.append(
            {"name": "bytes per live env", "unit": "bytes", "values": [], "skipped": str(why)}
        )
    games = 2000 if args.quick else 100_000
    try:
        _import("agents.evaluation")
        peak = evaluation_peak(games, args.workers)
        rows.append(
            {
                "name": f"peak RSS, {games:,}-game evaluation",
                "unit": "bytes",
                "values": [peak["self_bytes"]],
                "median": peak["self_bytes"],
                "note": f"peak RSS of the child (workers={args.workers}); largest worker "
                f"{peak['worker_bytes'] / 2**20:.0f} MiB; {peak['seconds']:.0f} s"
                + (" (--quick)" if args.quick else ""),
            }
        )
        log(f"  peak: {peak}")
    except Skip as why:
        rows.append(
            {
                "name": f"peak RSS, {games:,}-game evaluation",
                "unit": "bytes",
                "values": [],
                "skipped": str(why),
            }
        )
    return {"rows": rows}


# ---------------------------------------------------------------------- targets and output


def find(results: dict, section: str, name: str, key: str = "median"):
    for row in results.get(section, {}).get("rows", []):
        if row["name"] == name:
            return row.get(key)
    return None


def targets(results: dict) -> list[dict]:
    def target(text, value, ok):
        return {"target": text, "measured": value, "met": None if value is None else ok(value)}

    tic = find(results, "aec", "tictactoe_v3", "ratio")
    leduc = find(results, "aec", "leduc_holdem_v4", "ratio")
    engine = find(results, "engine", "pyspiel leduc_poker (no tensor)", "ratio")
    share = find(results, "train", "env share of training time")
    workers = find(results, "eval", "evaluation 1 worker", "ratio")
    per_env = find(results, "memory", "bytes per live env")
    return [
        target("AEC env >= 2x tictactoe_v3 agent steps/s", tic, lambda v: v >= 2),
        target("AEC env >= 5x leduc_holdem_v4 agent steps/s", leduc, lambda v: v >= 5),
        target("engine >= pyspiel leduc_poker decisions/s", engine, lambda v: v >= 1),
        target("env <= 20% of MaskablePPO training time", share, lambda v: v <= 0.20),
        target("evaluation 2 workers >= 1.7x 1 worker", workers, lambda v: v >= 1.7),
        target("< 50 KB per env instance", per_env, lambda v: v < 50_000),
    ]


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "fraction":
        return f"{100 * value:.1f}%"
    if unit == "bytes":
        return f"{value / 1024:,.1f} KiB" if value < 2**20 else f"{value / 2**20:,.1f} MiB"
    return f"{value:,.0f}"


def table(results: dict) -> str:
    lines = [
        "| section | benchmark | median | unit | reference / this (median of pairs) | note |",
        "|---|---|---:|---|---:|---|",
    ]
    for section, result in results.items():
        if "skipped" in result:
            lines.append(f"| {section} | (skipped: {result['skipped']}) | | | | |")
            continue
        for row in result["rows"]:
            if "skipped" in row:
                lines.append(f"| {section} | {row['name']} | skipped | | | {row['skipped']} |")
                continue
            ratio = row.get("ratio")
            ratio_text = f"{ratio:.2f}x" if ratio is not None else ""
            if row.get("reference"):
                ratio_text = "reference"
            lines.append(
                f"| {section} | {row['name']} | {fmt(row['median'], row['unit'])} | "
                f"{'' if row['unit'] in ('bytes', 'fraction') else row['unit']} | {ratio_text} | "
                f"{row.get('note', '')} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (median reported)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections of: {', '.join(SECTIONS)}",
    )
    parser.add_argument(
        "--json",
        default=str(ROOT / "benchmarks" / "results.json"),
        help="where to write the JSON results",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="fewer games/steps in train, eval and memory (2,000-game peak)",
    )
    parser.add_argument("--workers", type=int, default=2, help="workers of the peak-memory run")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(
            f"--only: unknown section(s) {', '.join(unknown)}; allowed: {', '.join(SECTIONS)}"
        )
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")

    def log(text: str) -> None:
        print(text, flush=True)

    meta = {
        "command": " ".join(["python", "benchmarks/run.py", *(argv or sys.argv[1:])]),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg(),
        "repeats": args.repeats,
        "seconds": args.seconds,
        "quick": args.quick,
    }
    functions = {
        "aec": section_aec,
        "engine": section_engine,
        "solo": section_solo,
        "train": section_train,
        "eval": section_eval,
        "memory": section_memory,
    }
    results: dict[str, dict] = {}
    for section in SECTIONS:
        if section not in only:
            continue
        log(f"== {section}")
        t0 = now()
        try:
            results[section] = functions[section](args, log)
        except Skip as why:
            results[section] = {"skipped": str(why)}
            log(f"  skipped: {why}")
        results[section]["seconds"] = round(now() - t0, 1)
    meta["load_after"] = os.getloadavg()
    goals = targets(results)
    print()
    print(table(results))
    print()
    for goal in goals:
        state = {True: "met", False: "NOT met", None: "not measured"}[goal["met"]]
        print(f"- {goal['target']}: {state}")
    print(f"\nload average before {meta['load_before']}, after {meta['load_after']}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    document = {"meta": meta, "sections": results, "targets": goals}
    atomic_write_text(args.json, json.dumps(document, indent=1) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
