"""numba's on-disk cache of the project's compiled functions (the batched engine's kernels,
...), safe for processes that compile at the same time: :func:`njit` is ``numba.njit`` with
this cache.

Why: numba writes each cache file atomically, but not a function's entries as a whole. Its
index (signature -> data file) is read, changed and written back without a lock, then the data
file is written. Two processes compiling one function for two record types at once can both
pick data file 1. The index can then name one signature's machine code for the other: later
runs crashed (``corrupted size vs. prev_size``), spun or computed wrong results (issue 41).

Here, for every function compiled with :func:`njit`:

- a compilation and its save hold an exclusive lock (``fcntl.flock`` on ``trash_env.lock`` in
  the cache directory). The others wait, then load what it saved rather than compile it too;
- the data file is written before the index entry that names it. Each entry records its data's
  SHA-256, and what is loaded must match it and carry the signature asked for. Loads take no
  lock: a half-done save is never visible, and a mismatch is caught;
- an entry that does not match (or an index that cannot be read) is compiled again, with one
  line on stderr naming the function. The first compilation in a process says so in one line;
  a last line at exit says how long compiling took in all.

The files are numba's own, under names of their own (``*.checked.nbi``/``.nbc``), so that
numba's plain cache never reads them nor they its files. Where numba keeps them (next to the
source, ``NUMBA_CACHE_DIR``, ...) is numba's choice, as for ``cache=True``.
"""

from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import pickle
import stat
import sys
import time
from collections.abc import Callable
from typing import Any

from numba.core import config, sigutils
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

try:
    import fcntl
except ImportError:  # not POSIX: no lock between processes; the loads are still checked
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = "trash_env.lock"
# What the first compilation of a process says it costs: the batched engine's kernels on 2
# cores (docs/vector.md).
COMPILE_ESTIMATE = "about half a minute"


def _say(line: str) -> None:
    print(f"trash_env: {line}", file=sys.stderr, flush=True)


class _Locks:
    """Exclusive locks on cache directories, held by this process and re-entered by nested
    compilations (a kernel's callees compile inside its compilation). Changed only under
    numba's compiler lock, so one thread at a time."""

    def __init__(self) -> None:
        self.held: dict[str, tuple[int, int]] = {}  # directory -> (descriptor, depth)

    def acquire(self, directory: str) -> None:
        fd, depth = self.held.get(directory, (-1, 0))
        if depth == 0:
            fd = self._open(directory)
            if fd >= 0:
                fcntl.flock(fd, fcntl.LOCK_EX)
        self.held[directory] = (fd, depth + 1)

    def depths(self) -> dict[str, int]:
        return {directory: depth for directory, (_, depth) in self.held.items()}

    def release_to(self, depths: dict[str, int]) -> None:
        """Release what was acquired since ``depths`` was taken."""
        for directory, (fd, depth) in list(self.held.items()):
            keep = depths.get(directory, 0)
            if depth <= keep:
                continue
            if keep == 0:
                del self.held[directory]
                if fd >= 0:
                    os.close(fd)  # closing the descriptor releases the lock
            else:
                self.held[directory] = (fd, keep)

    @staticmethod
    def _open(directory: str) -> int:
        """The lock file's descriptor, or -1 where no lock can be had (then unlocked)."""
        if fcntl is None:
            return -1
        path = os.path.join(directory, LOCK_NAME)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            os.makedirs(directory, exist_ok=True)
            fd = os.open(path, flags, 0o644)
        except OSError as error:
            _say(f"cannot lock numba's cache ({path}: {error.strerror}); compiling unlocked")
            return -1
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            _say(f"cannot lock numba's cache ({path} is not a regular file); compiling unlocked")
            return -1
        return fd


_LOCKS = _Locks()


class _Compiling:
    """This process's compilations: the first says so, the total is said at exit."""

    def __init__(self) -> None:
        self.started: float | None = None  # when the running top-level compilation missed
        self.seconds = 0.0
        self.functions = 0

    def missed(self, name: str, directory: str) -> None:
        self.functions += 1
        if self.started is None:
            self.started = time.perf_counter()
        if self.functions == 1:
            atexit.register(self.report)
            _say(
                f"compiling with numba, {name} first ({COMPILE_ESTIMATE} for the batched "
                f"engine; once: later runs load it from {directory})"
            )

    def finished(self) -> None:
        if self.started is not None:
            self.seconds += time.perf_counter() - self.started
            self.started = None

    def report(self) -> None:
        _say(f"numba compiled {self.functions} function(s) in {self.seconds:.1f} s (now cached)")


_COMPILING = _Compiling()


class Mismatch(Exception):
    """A cache entry that is not what its index says."""


class _CheckedFiles(IndexDataCacheFile):
    """numba's index and data files, each entry with its data's SHA-256, data written first."""

    def save(self, key: Any, data: Any) -> None:
        payload = self._dump(data)
        try:
            entries = self._load_index()
        except Exception:  # an unreadable index: replaced by this entry
            entries = {}
        # A data file of its own: never one another entry names (a bad index may name one twice).
        taken = {e[0] for k, e in entries.items() if k != key and isinstance(e, tuple) and e}
        name = next(n for n in map(self._data_name, itertools.count(1)) if n not in taken)
        with self._open_for_write(self._data_path(name)) as f:
            f.write(payload)
        entries[key] = (name, hashlib.sha256(payload).hexdigest())
        self._save_index(entries)

    def load(self, key: Any) -> Any:
        try:
            entries = self._load_index()
        except Exception as error:
            raise Mismatch(f"its index cannot be read ({type(error).__name__})") from None
        entry = entries.get(key)
        if entry is None:
            return None
        if not (isinstance(entry, tuple) and len(entry) == 2):
            raise Mismatch("its index entry is not a (file, checksum) pair")
        name, digest = entry
        try:
            with open(self._data_path(name), "rb") as f:
                payload = f.read()
        except OSError:
            return None  # removed since: compiled again
        if hashlib.sha256(payload).hexdigest() != digest:
            raise Mismatch(f"{name} does not match its checksum")
        try:
            return pickle.loads(payload)
        except Exception as error:
            raise Mismatch(f"{name} cannot be read ({type(error).__name__})") from None


class CheckedCache(FunctionCache):
    """numba's per-function cache with :class:`_CheckedFiles`, a lock around compilation, and
    the loaded entry's signature checked against the one asked for."""

    def __init__(self, py_func: Callable) -> None:
        super().__init__(py_func)
        self._cache_file = _CheckedFiles(
            cache_path=self._cache_path,
            filename_base=self._impl.filename_base + ".checked",
            source_stamp=self._impl.locator.get_source_stamp(),
        )
        self._reported: set[Any] = set()

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        target_context.refresh()
        found = self._checked_load(sig, target_context)
        if found is not None or not self._enabled:
            return found
        _LOCKS.acquire(self._cache_path)  # held until the dispatcher's compile returns
        found = self._checked_load(sig, target_context)  # another process may have saved it
        if found is None:
            _COMPILING.missed(self._py_func.__qualname__, self._cache_path)
        return found

    def _checked_load(self, sig: Any, target_context: Any) -> Any:
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        try:
            payload = self._cache_file.load(key)
            if payload is None:
                return None
            args, _ = sigutils.normalize_signature(sig)
            signature = payload[3] if isinstance(payload, tuple) and len(payload) > 3 else None
            if getattr(signature, "args", None) != tuple(args):
                raise Mismatch(f"its entry holds another signature ({signature})")
        except Mismatch as error:
            if key not in self._reported:
                self._reported.add(key)
                _say(
                    f"numba's cached {self._py_func.__qualname__} in {self._cache_path} "
                    f"did not match ({error}); compiling it again"
                )
            return None
        return self._impl.rebuild(target_context, payload)


class CheckedDispatcher(CPUDispatcher):
    """numba's CPU dispatcher whose cache is :class:`CheckedCache`; a compilation gives back
    the locks it took, whether it succeeded or raised."""

    def enable_caching(self) -> None:
        self._cache = CheckedCache(self.py_func)

    def compile(self, sig: Any) -> Any:
        with global_compiler_lock:
            depths = _LOCKS.depths()
            try:
                return super().compile(sig)
            finally:
                _LOCKS.release_to(depths)
                if not any(depths.values()):
                    _COMPILING.finished()


def njit(func: Callable | None = None, *, cache: bool = False, **options: Any) -> Any:
    """``numba.njit`` (``parallel``, ``inline``, ``fastmath``, ...) whose ``cache=True`` is
    :class:`CheckedCache`. Used as ``@njit(cache=True)`` or ``njit(cache=True)(function)``."""

    def wrap(function: Callable) -> Any:
        # NUMBA_DISABLE_JIT: the plain Python function, as numba's own decorator gives
        if config.DISABLE_JIT:  # type: ignore[attr-defined]
            return function
        targetoptions = {**options, "nopython": True, "boundscheck": None}
        dispatcher = CheckedDispatcher(py_func=function, locals={}, targetoptions=targetoptions)
        if cache:
            dispatcher.enable_caching()
        return dispatcher

    return wrap if func is None else wrap(func)
