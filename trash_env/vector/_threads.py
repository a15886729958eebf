"""How the parallel kernels' threads wait: asleep, never spinning.

Why: on a machine whose cores are shared with other jobs a spinning thread keeps a core from
the thread a parallel loop waits for, and a parallel step then runs several times slower than
the serial one (docs/vector.md). numba's ``omp`` layer (GNU OpenMP) waits asleep when
``OMP_WAIT_POLICY=PASSIVE``, but libgomp reads that variable once, when it is loaded: torch
ships and loads the same ``libgomp.so.1``, so after ``import torch`` (every example's first
import) setting the variable is too late and the threads spin for milliseconds after each loop.

So :func:`choose_layer`, run before the first kernel: if the user chose (``OMP_WAIT_POLICY``,
``GOMP_SPINCOUNT`` or ``NUMBA_THREADING_LAYER`` in the environment), their choice stands; else
``OMP_WAIT_POLICY=PASSIVE`` is set for a libgomp loaded later, and if libgomp is already loaded
numba is given its ``workqueue`` layer, whose threads wait asleep. ``workqueue`` aborts the
process when two threads launch parallel loops at once (holding the GIL does not prevent it),
so every parallel loop of this package runs under :data:`PARALLEL_LOCK`: threads (the web
table's bots, a user's) take turns (tests/test_vector_threads.py).
"""

from __future__ import annotations

import ctypes
import os
import threading

GOMP = "libgomp.so.1"
USER_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER")
# Held by each launch of a parallel kernel: one at a time in a process, whatever the layer.
PARALLEL_LOCK = threading.Lock()


def gomp_loaded() -> bool:
    """Whether this process has already loaded GNU OpenMP (a dlopen that loads nothing)."""
    try:
        ctypes.CDLL(GOMP, mode=getattr(os, "RTLD_NOLOAD", 4))
    except OSError:
        return False
    return True


def choose_layer() -> str | None:
    """Set the wait policy and, where it can no longer take effect, numba's threading layer
    (see the module docstring); returns the layer chosen here (None: numba's own choice)."""
    if any(name in os.environ for name in USER_SETTINGS):
        return None
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    if not gomp_loaded():
        return None
    from numba import config
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", False):  # a layer runs already: it cannot change
        return None
    config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]
    return "workqueue"
