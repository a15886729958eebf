"""The local worker processes of an evaluation, which end with it however it ends.

Why not a bare ``ProcessPoolExecutor``: its workers outlive a parent killed by SIGTERM or
SIGKILL (they wait on a queue whose write end they hold themselves, and so does the resource
tracker), and Ctrl-C in a terminal reaches every process of the group, each printing its own
traceback. Here each worker ignores SIGINT (the parent alone answers it) and a thread in it
waits on the parent's sentinel and ends the worker as soon as the parent is gone; on the way
out (that, or SIGTERM from a parent stopping the pool) it removes the temp file of a game log
it was writing (``trash_env.files.abandon_temp_files``). At most two
tasks per worker are in flight, so memory does not grow with the number of tasks. The same pool
serves both engines: a task plays a range of deals on the reference engine
(:func:`agents.evaluation.tournament.play_deals`) or on the batched one
(:func:`agents.evaluation.batched.play_deals`, the cores shared out between the workers'
parallel loops). Workers are
spawned: they re-import the calling script, which is why a script must call
:func:`agents.evaluation.evaluate` under ``if __name__ == "__main__":``.
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


def _start(plan: Plan, engine: str, threads: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)
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
def _sigint_ignored_by_children() -> Iterator[None]:
    """Workers spawned inside this block start with SIGINT ignored (a disposition survives
    exec; the signal mask does not), so a Ctrl-C while one is still importing cannot print a
    traceback. Here SIGINT is blocked meanwhile: a Ctrl-C is held, then answered as usual."""
    if not hasattr(signal, "pthread_sigmask") or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    old_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # blocked: nothing is lost
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


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
    with _sigint_ignored_by_children():  # each of the first ``workers`` submits spawns a worker
        pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(plan, engine, threads),
        )
        pending: deque[Future] = deque()
        for first, stop in itertools.islice(ranges, workers):
            pending.append(pool.submit(play, first, stop))
    try:
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
