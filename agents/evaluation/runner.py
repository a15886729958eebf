"""The tournament runner behind :func:`agents.evaluation.evaluate`.

Every game's result streams into the statistics in deal order as soon as its range of deals is
played, so memory does not grow with the number of games, and a seed gives the same numbers
whatever ``workers`` and ``backend`` are. A worker that dies (a script without its ``__main__``
guard, a crash, ``os._exit``) ends the evaluation with a ``RuntimeError`` saying so.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import operator
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import SupportsIndex

from agents.evaluation.batched import batch_chunk, batched_stream, engine_for, split_workers
from agents.evaluation.report import Report
from agents.evaluation.scoring import Tally, one_seat_figures
from agents.evaluation.tournament import (
    GameColumns,
    GameResult,
    Plan,
    check_specs,
    deal_seed,
    game_file,
    lineups,
    play_deals,
    seat_orders,
    start_worker,
    stop_worker,
)
from trash_env.files import safe_text, sweep_temp_files
from trash_env.rules import Rules

BACKENDS = ("local", "ray")  # ray: agents/evaluation/ray_backend.py (the deal ranges as Ray tasks)
MAX_GAMES = 10_000_000  # a ceiling on one evaluation: a typo fails at once, not after days
MAX_WORKERS = 256
MAX_SAVED_GAMES = 100_000  # one file each: a folder a person can still list and a report can index


def _refuse_in_a_bootstrapping_worker() -> None:
    """A spawned worker re-imports the main script; a script without a ``__main__`` guard
    would start an evaluation inside it. Say why, in the worker's own error."""
    process = multiprocessing.current_process()
    if multiprocessing.parent_process() is not None and getattr(process, "_inheriting", False):
        raise RuntimeError(
            "evaluate() was called while a worker process was starting: the calling script "
            "runs again in each worker (spawn start method). Put the call under "
            '`if __name__ == "__main__":`.'
        )


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int (numpy integers too, bools not) within ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        ok = False
    else:
        value = number = operator.index(value)
        ok = number >= low and (high is None or number <= high)
    if not ok:
        allowed = f"from {low:,} to {high:,}" if high is not None else f"{low} or more"
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return value  # type: ignore[return-value]


def _in_process(
    plan: Plan, ranges: Iterator[tuple[int, int]]
) -> Generator[list[GameResult], None, None]:
    start_worker(plan)
    try:
        for first, stop in ranges:
            yield play_deals(first, stop)
    finally:
        stop_worker()


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
    keep_results: bool = False,
    save_games: str | Path | None = None,
    engine: str = "auto",
    one_seat: bool = False,
) -> Report:
    """Play a duplicate-deal tournament between ``agent_specs`` and report on it.

    Args:
        agent_specs: agent spec strings (``greedy``, ``search:rollouts=50``, ``model.safetensors``).
        rules: the rules (standard 2-player game by default); ``rules.num_players`` seats.
        games: games wanted in all; rounded up to whole deals (every line-up in every seating).
        seed: master seed: deal ``d`` and every agent's seed derive from it and ``d``.
        workers: processes; the numbers do not depend on it. The batched engine plays in
            this process (its loops on every core), or, when each of ``workers`` processes
            gets ``agents.evaluation.batched.SPLIT_MIN_GAMES`` games or more, in contiguous
            blocks of deals split over them (the cores shared out).
        progress: show a tqdm bar (True), or call ``progress(games_done)`` after each chunk.
        deals: the number of deals, instead of ``games``.
        seatings: ``"rotations"`` or ``"permutations"`` of each line-up.
        chunk: deals per task sent to a worker (default: about 4 tasks per worker, at most 64
            deals), or per batch of the batched engine (default: about 8,192 games, at most
            an equal share of the deals per worker).
        backend: ``"local"`` (this machine's processes) or ``"ray"`` (Ray tasks on the Ray
            instance or cluster of :mod:`agents.evaluation.ray_backend`; ``workers`` sizes the
            chunks and
            a local instance). The numbers do not depend on it.
        keep_results: also keep every game's :class:`GameResult` in ``report.results`` (memory
            grows with the games; off by default).
        save_games: a folder: every game's log (:mod:`agents.play.game_log`, the terminal game's
            schema, player names = the specs, no person's seat) is written there as
            ``<6-digit game index>.json``, and the report's JSON lists them under ``"games"``.
            At most ``MAX_SAVED_GAMES`` games.
        engine: ``"auto"`` (the batched engine, :mod:`agents.evaluation.batched`, when every
            agent has a batched form, numba is installed and the backend is local; else the
            reference engine), ``"batched"`` (ValueError if it cannot) or ``"reference"``.
            Same games either way; ``report.engine`` says which played and why.
        one_seat: two specs: play only the first once against copies of the second in every
            other seat, each seat in turn (``--one-seat``); ``report.one_seat`` holds its
            share of the games against par (``1 / players``) with the 95% interval. With two
            players it is the usual head-to-head.
    """
    _refuse_in_a_bootstrapping_worker()
    rules = rules if rules is not None else Rules()
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a trash_env.rules.Rules, got {type(rules).__name__}")
    seed = _check_int("seed", seed, 0)
    workers = _check_int("workers", workers, 1, MAX_WORKERS)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of 'local', 'ray', got {backend!r}")
    specs = list(agent_specs)
    if not isinstance(one_seat, bool):
        raise ValueError(f"one_seat must be True or False, got {one_seat!r}")
    ups = lineups(specs, rules.num_players, one_seat=one_seat)
    plan = Plan(rules, [seat_orders(up, seatings) for up in ups], seed)
    per_deal = plan.games_per_deal
    if deals is None:
        games = _check_int("games", games, 1, MAX_GAMES)
        deals = -(-games // per_deal)
    else:
        deals = _check_int("deals", deals, 1)
    if deals * per_deal > MAX_GAMES:
        raise ValueError(
            f"deals: {deals:,} deals x {per_deal} games per deal is more than "
            f"{MAX_GAMES:,} games; at most {MAX_GAMES // per_deal:,} deals"
        )
    save_dir = None if save_games is None else _games_folder(save_games, deals * per_deal)
    plan = Plan(rules, plan.seatings, seed, save_dir)
    check_specs(specs)
    chosen = engine_for(specs, rules, engine, backend, deals * per_deal)
    if chosen.name == "batched":
        workers = split_workers(deals * per_deal, workers)
    if chunk is not None:
        chunk = _check_int("chunk", chunk, 1)
    elif chosen.name == "batched":
        chunk = batch_chunk(per_deal, deals, workers)
    else:
        chunk = max(1, min(64, deals // (4 * workers) or 1))
    ranges = ((i, min(deals, i + chunk)) for i in range(0, deals, chunk))
    tally = Tally(specs, rules.num_players)
    kept: list[GameResult] | None = [] if keep_results else None
    index: list[dict] | None = None if save_dir is None else []
    offsets = list(itertools.accumulate((len(orders) for orders in plan.seatings), initial=0))
    bar = None
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=deals * per_deal, unit="game", desc="evaluate")
    report_progress = progress if callable(progress) else None
    stream: Iterator[GameColumns | list[GameResult]]
    if chosen.name == "batched" and workers == 1:
        stream = batched_stream(plan, ranges)
    elif backend == "ray":
        from agents.evaluation.ray_backend import ray_stream

        stream = ray_stream(plan, list(ranges), workers)
    elif workers == 1:
        stream = _in_process(plan, ranges)
    else:
        from agents.evaluation.pool import local_stream

        stream = local_stream(plan, ranges, workers, chosen.name)
    try:
        with contextlib.closing(stream):  # an interrupt here stops the workers at once
            for part in stream:
                if isinstance(part, GameColumns):  # the batched engine's: counted as arrays
                    tally.add_columns(part)
                    results = part.results() if kept is not None or index is not None else []
                else:
                    results = part
                    for result in part:
                        tally.add(result)
                if kept is not None:
                    kept += results
                if index is not None:
                    index += [_index_entry(r, per_deal, offsets, seed, rules) for r in results]
                if bar is not None:
                    bar.update(len(part))
                if report_progress is not None:
                    report_progress(tally.games)
    except BaseException:
        if save_dir is not None:  # the workers are stopped: what temp files remain are dead
            sweep_temp_files(save_dir, SAVED_GAME_NAMES)
        raise
    finally:
        if bar is not None:
            bar.close()
    report = Report(
        specs=specs,
        rules=rules,
        seed=seed,
        seatings=seatings,
        lineups=ups,
        deals=deals,
        results=kept,
        engine=chosen.describe(),
    )
    if save_games is not None:
        report.saved_games = {"dir": str(save_games), "index": index}
    tally.fill(report)
    if one_seat:
        report.one_seat = one_seat_figures(report, specs[0])
    return report


SAVED_GAME_NAMES = r"[0-9]{6,}\.json"  # tournament.game_file's names, as a regular expression


def _games_folder(value: str | Path, games: int) -> str:
    """Check ``save_games`` before any game: a folder that exists or can be made, writable, and
    a number of games within MAX_SAVED_GAMES."""
    name = "save_games (--save-games)"
    if isinstance(value, bool) or not isinstance(value, (str, Path)) or str(value) == "":
        raise ValueError(f"{name} must name a folder, got {value!r}")
    if games > MAX_SAVED_GAMES:
        raise ValueError(
            f"{name}: at most {MAX_SAVED_GAMES:,} games are saved, one file each; "
            f"this evaluation plays {games:,}: ask for fewer games or deals"
        )
    folder = Path(value)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{name}: {safe_text(folder)} exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(
            f"{name}: cannot make {safe_text(folder)}: {error.strerror or error}"
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{name}: {safe_text(folder)} is not writable")
    # A run killed outright (kill -9 of the parent and its workers) can leave the temp files
    # of the game logs it was writing: this run, which rewrites those names, removes them.
    sweep_temp_files(folder, SAVED_GAME_NAMES)
    return str(folder)


def _index_entry(
    result: GameResult, per_deal: int, offsets: list[int], seed: int, rules: Rules
) -> dict:
    index = result.deal * per_deal + offsets[result.lineup] + result.seating
    return {
        "file": game_file(index),
        "specs": list(result.seats),
        "deal_seed": deal_seed(seed, result.deal, rules.num_players)[0],
        "winners": list(result.winners),
    }
