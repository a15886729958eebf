"""The local worker processes of an evaluation, which end with it however it ends.

Why not a bare ``ProcessPoolExecutor``: its workers outlive a parent killed by SIGTERM or
SIGKILL (they wait on a queue whose write end they hold themselves, and so does the resource
tracker), and Ctrl-C in a terminal reaches every process of the group, each printing its own
traceback. Here each worker ignores SIGINT (the parent alone answers it) and a thread in it
waits on the parent's sentinel and ends the worker as soon as the parent is gone; on the way
out (that, or SIGTERM from a parent stopping the pool) it removes the temp file of a game log
it was writing (``trash_env.files.abandon_temp_files``). The parent answers SIGINT and SIGTERM
only once every worker it spawns has its start-up data (:func:`_spawning`). At most two tasks
per worker are in flight, so memory does not grow with the number of tasks. The same pool
serves both engines: a task plays a range of deals on the reference engine
(:func:`agents.evaluation.tournament.play_deals`) or on the batched one
(:func:`agents.evaluation.batched.play_deals`, the cores shared out between the workers'
parallel loops). Workers are spawned: they re-import the calling script, which is why a script
must call :func:`agents.evaluation.evaluate` under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from agents.evaluation import batched, tournament
from agents.evaluation.tournament import GameColumns, GameResult, Plan
from trash_env.files import abandon_temp_files

IN_FLIGHT_PER_WORKER = 2
# Held while the parent spawns workers (_spawning), and in each worker until it starts (_start).
_HELD_WHILE_SPAWNING = (signal.SIGINT, signal.SIGTERM)


def _start(plan: Plan, engine: str, threads: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
    # Blocked since the parent spawned this worker (_spawning): a Ctrl-C meanwhile is dropped,
    # a SIGTERM from a parent stopping the pool is answered now, by _terminated.
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD_WHILE_SPAWNING)
    # One thread per worker process: a trained policy's torch must not oversubscribe.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    if engine == "batched":
        batched.start_worker(plan, threads)
    else:
        tournament.start_worker(plan)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (the parent stopping the pool): end now, leaving no half-written game file."""
    abandon_temp_files()
    os._exit(1)


def _exit_with(parent: multiprocessing.process.BaseProcess) -> None:
    parent.join()  # returns once the parent's end of the sentinel pipe is closed: it is gone
    abandon_temp_files()  # the parent was killed (even by SIGKILL): no temp file left behind
    os._exit(1)


@contextlib.contextmanager
def _spawning() -> Iterator[None]:
    """Spawn workers inside this block; SIGINT and SIGTERM are answered when it ends.

    Why: a handler that raised between a worker's start and the write of its start-up data
    left the worker reading a closed pipe, and it printed an ``EOFError`` traceback. Here the
    signals are blocked in this thread (the workers inherit that mask through exec, as
    multiprocessing's resource tracker does, and :func:`_start` answers them) and, since
    another thread (a BLAS pool's) may still take one, their Python handlers only note it
    meanwhile; what was noted is raised again once the old handlers are back."""
    if not hasattr(signal, "pthread_sigmask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    noted: list[int] = []
    held = [s for s in _HELD_WHILE_SPAWNING if signal.getsignal(s) is not None]
    previous = {s: signal.signal(s, lambda signum, frame: noted.append(signum)) for s in held}
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_WHILE_SPAWNING)
    try:
        yield
    finally:
        for held_signal, handler in previous.items():
            signal.signal(held_signal, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)  # what is pending arrives now
        for signum in noted:
            signal.raise_signal(signum)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop a worker pool now: cancel what is queued and end its processes."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)


def local_stream(
    plan: Plan, ranges: Iterable[tuple[int, int]], workers: int, engine: str = "reference"
) -> Generator[list[GameResult] | GameColumns, None, None]:
    """Play each ``(first, stop)`` range of deals in ``workers`` processes on ``engine``
    (``"reference"``: each range's results as a list; ``"batched"``: as columns); yield each
    range's results in the order of ``ranges``. A worker that dies raises ``RuntimeError``."""
    ranges = iter(ranges)
    play = batched.play_deals if engine == "batched" else tournament.play_deals
    threads = max(1, (os.cpu_count() or 1) // workers)
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start,
        initargs=(plan, engine, threads),
    )
    pending: deque[Future] = deque()
    try:
        # Each of the first ``workers`` submits spawns a worker; a signal held meanwhile is
        # answered when the block ends, inside this try, so the pool is stopped.
        with _spawning():
            for first, stop in itertools.islice(ranges, workers):
                pending.append(pool.submit(play, first, stop))
        for first, stop in ranges:
            pending.append(pool.submit(play, first, stop))
            if len(pending) >= IN_FLIGHT_PER_WORKER * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BrokenProcessPool:
        _stop(pool)
        raise RuntimeError(
            "evaluate(): a worker process died before finishing its deals (it crashed, "
            "was killed or exited). If evaluate() is called from a script with workers > 1, "
            'put the call under `if __name__ == "__main__":`: every worker starts by '
            "re-importing the script, which must not start an evaluation again. "
            "workers=1 runs in this process."
        ) from None
    except BaseException:  # Ctrl-C, SIGTERM turned into an exception, the caller closing us
        _stop(pool)
        raise
    pool.shutdown(wait=True)
