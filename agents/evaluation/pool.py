"""The local worker processes of an evaluation, which end with it however it ends.

Why not a bare ``ProcessPoolExecutor``: its workers outlive a parent killed by SIGTERM or
SIGKILL (they wait on a queue whose write end they hold themselves, and so does the resource
tracker), and Ctrl-C in a terminal reaches every process of the group, each printing its own
traceback. Here each worker ignores SIGINT (the parent alone answers it) and a thread in it
waits on the parent's sentinel and ends the worker as soon as the parent is gone. At most two
tasks per worker are in flight, so memory does not grow with the number of tasks. Workers are
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

from agents.evaluation import tournament
from agents.evaluation.tournament import GameResult, Plan

IN_FLIGHT_PER_WORKER = 2


def _start(plan: Plan) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # One thread per worker process: a trained policy's torch must not oversubscribe.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()
    tournament.start_worker(plan)


def _exit_with(parent: multiprocessing.process.BaseProcess) -> None:
    parent.join()  # returns once the parent's end of the sentinel pipe is closed: it is gone
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


def local_stream(
    plan: Plan, ranges: Iterable[tuple[int, int]], workers: int
) -> Generator[list[GameResult], None, None]:
    """Play each ``(first, stop)`` range of deals in ``workers`` processes; yield each range's
    results in the order of ``ranges``. A worker that dies raises ``RuntimeError``."""
    ranges = iter(ranges)
    with _sigint_ignored_by_children():  # each of the first ``workers`` submits spawns a worker
        pool = ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(plan,),
        )
        pending: deque[Future] = deque()
        for first, stop in itertools.islice(ranges, workers):
            pending.append(pool.submit(tournament.play_deals, first, stop))
    try:
        for first, stop in ranges:
            pending.append(pool.submit(tournament.play_deals, first, stop))
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
