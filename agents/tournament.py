"""Tournaments between agents with duplicate deals: who plays whom, on which deal, in which
process. :func:`evaluate` schedules the games and returns a :class:`agents.report.Report` whose
figures :mod:`agents.scoring` computes.

Fair by construction:

- **Line-ups.** With as many agent specs as seats, the one line-up is the list itself. With fewer
  specs than seats, every multiset of specs that fills the seats with each spec at least once
  (2 specs, 4 seats: 3+1, 2+2 and 1+3 copies). With more specs than seats, every combination
  of ``num_players`` distinct specs from the list. A line-up is seated in list order (copies
  side by side).
- **Seatings.** Every line-up is played in every rotation of its seats (``seatings="rotations"``,
  each spec sits at each seat equally often) or in every distinct seat permutation
  (``seatings="permutations"``, also every turn order; n! orders).
- **Duplicate deals.** Deal ``d`` has one seed, derived from the master seed and ``d`` only; every
  game of every line-up and seating of deal ``d`` starts from a Game with that seed and the same
  first seat, so the same shuffled deck is dealt to every seat order and the luck of the deal
  cancels. Later rounds are shuffled by each game's own generator, which is the same too; the
  deals stay identical as long as play does, and part once two games differ (reshuffles are
  drawn from the same generator, but the piles being shuffled differ). Agents' seeds derive
  from the master seed, the deal, the line-up, the seating and the seat.
- **Workers.** ``workers`` processes play whole deals; results are gathered in deal order and
  every figure is computed in the main process in that order, so a seed gives the same numbers
  whatever ``workers`` is. Workers are spawned, so they re-import the calling script: a script
  must call :func:`evaluate` under ``if __name__ == "__main__":``. A worker that dies (that
  missing guard, a crash, ``os._exit``) ends the evaluation with a ``RuntimeError`` saying so,
  instead of the endless respawning of a ``multiprocessing.Pool``.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent, make_agent, parse_spec
from agents.report import Report
from agents.scoring import summarise
from trash_env.engine import Game
from trash_env.match import Match
from trash_env.rules import Rules

SEATINGS = ("rotations", "permutations")
BACKENDS = ("local", "ray")  # ray: agents/ray_backend.py (the deal chunks as Ray tasks)
MAX_GAMES = 10_000_000  # a ceiling on one evaluation: a typo fails at once, not after days
MAX_WORKERS = 256


# ---------------------------------------------------------------------------- line-ups


def lineups(specs: Sequence[str], num_players: int) -> list[tuple[str, ...]]:
    """The line-ups a tournament plays (see the module docstring), in a fixed order."""
    specs = list(specs)
    if not specs:
        raise ValueError("agents: give at least one agent spec")
    if len(set(specs)) != len(specs):
        raise ValueError(f"agents: each spec once, got {' '.join(specs)}")
    m, n = len(specs), num_players
    if m == n:
        return [tuple(specs)]
    if m > n:
        return list(itertools.combinations(specs, n))
    out = []
    for extra in itertools.combinations_with_replacement(range(m), n - m):
        counts = [1 + extra.count(i) for i in range(m)]
        out.append(tuple(s for s, c in zip(specs, counts, strict=True) for _ in range(c)))
    return out


def seat_orders(lineup: Sequence[str], how: str = "rotations") -> list[tuple[str, ...]]:
    """Seat orders of a line-up: its ``n`` rotations, or its distinct permutations."""
    if how not in SEATINGS:
        raise ValueError(f"seatings must be one of {', '.join(SEATINGS)}, got {how!r}")
    n = len(lineup)
    if how == "rotations":
        return [tuple(lineup[(i + r) % n] for i in range(n)) for r in range(n)]
    return sorted(set(itertools.permutations(lineup)), key=lambda s: [lineup.index(x) for x in s])


# ---------------------------------------------------------------------------- playing


@dataclass(frozen=True)
class GameResult:
    """What one game of a tournament produced (small, picklable)."""

    deal: int
    lineup: int
    seating: int
    seats: tuple[str, ...]
    first_player: int
    winners: tuple[int, ...]
    placings: tuple[int, ...] | None
    returns: tuple[float, ...]
    rounds: int
    turns: int
    truncated: bool


def deal_seed(seed: int, deal: int, num_players: int) -> tuple[int, int]:
    """The Game seed and first seat of deal ``deal``: from the master seed and ``deal`` only."""
    state = np.random.SeedSequence(seed, spawn_key=(deal,)).generate_state(2, np.uint64)
    return int(state[0]), int(state[1] % num_players)


def agent_seed(seed: int, deal: int, lineup: int, seating: int, seat: int) -> int:
    state = np.random.SeedSequence(seed, spawn_key=(deal, lineup, seating, seat, 1))
    return int(state.generate_state(1, np.uint64)[0])


def play_game(
    rules: Rules,
    agents: Sequence[Agent],
    seed: int | None,
    first_player: int | None = None,
    agent_seeds: Sequence[int | None] | None = None,
) -> Game:
    """Play one game on the engine, ``agents[p]`` at seat ``p``; return the finished Game.

    Every agent gets its observation (None if it does not use it), mask and a PublicView; a
    "Trash!" call is made for it (bots always call). An illegal action raises ValueError
    naming the agent."""
    game = Game(rules, seed=seed, first_player=first_player)
    n = game.num_players
    if len(agents) != n:
        raise ValueError(f"play_game: {n} seats need {n} agents, got {len(agents)}")
    for p, agent in enumerate(agents):
        agent.reset(seed=None if agent_seeds is None else agent_seeds[p])
    return Match(game, agents).play()


class _Table:
    """A worker's agents, one per (spec, seat), built once and reset before every game."""

    def __init__(self) -> None:
        self.agents: dict[tuple[str, int], Agent] = {}

    def seat(self, spec: str, seat: int) -> Agent:
        key = (spec, seat)
        if key not in self.agents:
            self.agents[key] = make_agent(spec)
        return self.agents[key]


_WORKER: dict[str, Any] = {}


def _init_worker(
    rules: Rules, plan: list[list[tuple[str, ...]]], seed: int, pool: bool = False
) -> None:
    if pool:  # one thread per worker process: a trained policy's torch must not oversubscribe
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        os.environ.setdefault("MKL_NUM_THREADS", "1")
    _WORKER.update(rules=rules, plan=plan, seed=seed, table=_Table())


def _play_deals(deals: Sequence[int]) -> list[GameResult]:
    rules, plan, seed, table = (_WORKER[k] for k in ("rules", "plan", "seed", "table"))
    out = []
    n = rules.num_players
    for d in deals:
        game_seed, first = deal_seed(seed, d, n)
        for li, orders in enumerate(plan):
            for si, seats in enumerate(orders):
                agents = [table.seat(spec, p) for p, spec in enumerate(seats)]
                seeds = [agent_seed(seed, d, li, si, p) for p in range(n)]
                game = play_game(rules, agents, game_seed, first, seeds)
                out.append(
                    GameResult(
                        deal=d, lineup=li, seating=si, seats=seats, first_player=first,
                        winners=tuple(game.winners),
                        placings=None if game.placings is None else tuple(game.placings),
                        returns=tuple(game.returns()), rounds=game.deal_number,
                        turns=game.turns, truncated=game.truncated,
                    )
                )
    return out


# ---------------------------------------------------------------------------- evaluate


def _refuse_in_a_bootstrapping_worker() -> None:
    """A spawned worker re-imports the main script; a script without a ``__main__`` guard
    would start an evaluation inside it. Say why, in the worker's own error."""
    process = multiprocessing.current_process()
    if multiprocessing.parent_process() is not None and getattr(process, "_inheriting", False):
        raise RuntimeError(
            "evaluate() was called while a worker process was starting: the calling script "
            "runs again in each worker (spawn start method). Put the call under "
            "`if __name__ == \"__main__\":`."
        )


def _stop(pool: ProcessPoolExecutor | None) -> None:
    """Stop a worker pool now: cancel what is queued and end its processes."""
    if pool is None:
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)


def check_specs(specs: Sequence[str]) -> None:
    """Build every spec once so that a bad one fails before any game (clear ValueError)."""
    for spec in specs:
        if parse_spec(spec)[0] == "human":
            raise ValueError("agents: 'human' cannot sit in a tournament; use python -m "
                             "agents.play to play against the bots")
        make_agent(spec, seed=0)


def evaluate(
    agent_specs: Sequence[str],
    rules: Rules | None = None,
    games: int | None = 1000,
    seed: int = 0,
    workers: int = 1,
    progress: bool | Callable[[int], None] = False,
    *,
    deals: int | None = None,
    seatings: str = "rotations",
    chunk: int | None = None,
    backend: str = "local",
) -> Report:
    """Play a duplicate-deal tournament between ``agent_specs`` and report on it.

    Args:
        agent_specs: agent spec strings (``greedy``, ``search:rollouts=50``, ``model.safetensors``).
        rules: the rules (standard 2-player game by default); ``rules.num_players`` seats.
        games: games wanted in all; rounded up to whole deals (every line-up in every seating).
        seed: master seed: deal ``d`` and every agent's seed derive from it and ``d``.
        workers: processes; the numbers do not depend on it.
        progress: show a tqdm bar (True), or call ``progress(games_done)`` after each chunk.
        deals: the number of deals, instead of ``games``.
        seatings: ``"rotations"`` or ``"permutations"`` of each line-up.
        chunk: deals per task sent to a worker (default: about 4 tasks per worker).
        backend: ``"local"`` (this machine's processes) or ``"ray"`` (Ray tasks on the Ray
            instance or cluster of :mod:`agents.ray_backend`; ``workers`` sizes the chunks and
            a local instance). The numbers do not depend on it.
    """
    _refuse_in_a_bootstrapping_worker()
    rules = rules if rules is not None else Rules()
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a trash_env.rules.Rules, got {type(rules).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer 0 or more, got {seed!r}")
    if (isinstance(workers, bool) or not isinstance(workers, int)
            or not 1 <= workers <= MAX_WORKERS):
        raise ValueError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of 'local', 'ray', got {backend!r}")
    specs = list(agent_specs)
    ups = lineups(specs, rules.num_players)
    plan = [seat_orders(up, seatings) for up in ups]
    per_deal = sum(len(orders) for orders in plan)
    if deals is None:
        if (isinstance(games, bool) or not isinstance(games, int)
                or not 1 <= games <= MAX_GAMES):
            raise ValueError(f"games must be an integer from 1 to {MAX_GAMES:,}, got {games!r}")
        deals = -(-games // per_deal)
    elif isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals must be an integer 1 or more, got {deals!r}")
    if deals * per_deal > MAX_GAMES:
        raise ValueError(f"deals: {deals:,} deals x {per_deal} games per deal is more than "
                         f"{MAX_GAMES:,} games; at most {MAX_GAMES // per_deal:,} deals")
    check_specs(specs)
    if chunk is None:
        chunk = max(1, min(64, deals // (4 * workers) or 1))
    tasks = [list(range(i, min(deals, i + chunk))) for i in range(0, deals, chunk)]
    results: list[GameResult] = []
    bar = None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=deals * per_deal, unit="game", desc="evaluate")
    report_progress = progress if callable(progress) else None
    try:
        if backend == "ray":
            from agents.ray_backend import ray_stream

            stream = ray_stream(rules, plan, seed, tasks, workers)
            pool = None
        elif workers == 1:
            _init_worker(rules, plan, seed)
            stream = map(_play_deals, tasks)
            pool = None
        else:
            # Not multiprocessing.Pool: it respawns a worker that dies, forever, and the caller
            # waits forever. The executor marks itself broken and says so instead.
            pool = ProcessPoolExecutor(
                workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker, initargs=(rules, plan, seed, True),
            )
            stream = pool.map(_play_deals, tasks)
        try:
            for part in stream:
                results += part
                if bar is not None:
                    bar.update(len(part))
                if report_progress is not None:
                    report_progress(len(results))
        except BrokenProcessPool:
            _stop(pool)
            raise RuntimeError(
                "evaluate(): a worker process died before finishing its deals (it crashed, "
                "was killed or exited). If evaluate() is called from a script with workers > 1, "
                "put the call under `if __name__ == \"__main__\":`: every worker starts by "
                "re-importing the script, which must not start an evaluation again. "
                "workers=1 runs in this process."
            ) from None
        except BaseException:
            _stop(pool)
            raise
        else:
            if pool is not None:
                pool.shutdown(wait=True)
    finally:
        if bar is not None:
            bar.close()
        _WORKER.clear()
    report = Report(specs=specs, rules=rules, seed=seed, seatings=seatings, lineups=ups,
                    deals=deals, results=results)
    summarise(report)
    return report
