"""Files written and names shown safely: atomic writes (a crash never leaves half a file),
output paths checked before any work, and names from files or paths escaped before they reach
a terminal."""

from __future__ import annotations

import csv
import errno
import io
import os
import re
import stat
import tempfile
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path


def safe_text(text: object) -> str:
    """``text`` with control and format characters escaped (``\\x1b``): names that come from
    files or paths are never written raw to a terminal."""
    out = []
    for char in str(text):
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)


class WriteError(OSError):
    """A file this project writes could not be written (a full disk, a special file in the
    way); the previous file, if any, is whole."""


_TEMP_LOCK = threading.Lock()  # creating or finishing a temp file vs. abandon_temp_files()
_PENDING: set[str] = set()  # this process's temp files not yet renamed into place


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return word
    return None if stat.S_ISREG(mode) else "not a regular file"


def output_target(path: str | Path) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or for a symlink (a chain of
    them) its final target, written through as the shell's ``>`` would, the link kept."""
    return Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and ``os.replace``:
    a crash or a full disk leaves the old file whole (or no file), never half a new one. A
    symlink is written through (its target replaced, the link kept); a directory, device, FIFO
    or socket is never replaced (``OSError``)."""
    path = output_target(path)
    try:
        kind = _kind(os.stat(path).st_mode)
    except FileNotFoundError:
        kind = None
    if kind is not None:
        raise WriteError(errno.EINVAL, f"is {kind}, not a regular file: not replaced", str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # check_output_path allowed creating it
        with _TEMP_LOCK:
            handle = tempfile.NamedTemporaryFile(
                dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
            )
            _PENDING.add(handle.name)
    except OSError as error:
        raise WriteError(error.errno, error.strerror, str(path)) from error
    try:
        with handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # The temp file is private (0600); give the result the mode a plain open() would.
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(handle.name, mode)
        with _TEMP_LOCK:
            os.replace(handle.name, path)
            _PENDING.discard(handle.name)
    except OSError as error:
        _remove(handle.name)  # a write's error (a full disk) names no file: name the target
        raise WriteError(error.errno, error.strerror, str(path)) from error
    except BaseException:
        _remove(handle.name)
        raise


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass
    _PENDING.discard(name)


def abandon_temp_files() -> None:
    """Remove this process's unfinished temp files, for a process about to end abruptly
    (``os._exit`` in a worker whose parent is gone, or on SIGTERM). Temp files started after
    this call are never renamed into place: the lock is kept (up to 1 s for the thread that
    holds it), so a write in flight blocks until the process ends."""
    _TEMP_LOCK.acquire(timeout=1.0)
    for name in list(_PENDING):
        _remove(name)


def sweep_temp_files(folder: str | Path, pattern: str) -> int:
    """Remove the temp files :func:`atomic_write_bytes` leaves beside ``folder/NAME`` for the
    names matching ``pattern`` (a regular expression) when a process is killed outright;
    returns how many. Only files of that exact shape (``.NAME.<random>.tmp``) are touched."""
    shape = re.compile(rf"\.(?:{pattern})\.[A-Za-z0-9_]+\.tmp")
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if shape.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
                removed += 1
            except OSError:
                pass
    return removed


def describe_os_error(error: OSError) -> str:
    """One line for a failed read or write: what failed, the file (escaped) and the system's
    reason."""
    reason = error.strerror or str(error)
    if error.filename is None:
        return reason
    verb = "cannot write " if isinstance(error, WriteError) else ""
    return f"{verb}{safe_text(error.filename)}: {reason}"


def atomic_write_text(path: str | Path, text: str) -> None:
    """:func:`atomic_write_bytes` of UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_csv(
    path: str | Path, header: Sequence[str], rows: Iterable[Sequence[object]]
) -> None:
    """A CSV table, ``header`` then ``rows``, written as :func:`atomic_write_text`."""
    handle = io.StringIO(newline="")
    out = csv.writer(handle)
    out.writerow(header)
    out.writerows(rows)
    atomic_write_text(path, handle.getvalue())


IMAGE_SUFFIXES = (".png",)


def check_output_path(flag: str, value: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """Check before any work that ``value`` can be written as a regular file: not a directory,
    device, FIFO or socket (a symlink is judged by its target, which is what gets written),
    its suffix one of ``suffixes`` when given, and its directory (or the nearest existing
    ancestor, when it is to be made) one where a file can really be created: a probe file is
    made and removed there, since permission bits say yes on ``/proc`` to root. ``ValueError``
    naming ``flag`` otherwise."""
    path = Path(value)
    shown = safe_text(value)
    if str(value) == "" or path.name in ("", ".", ".."):
        raise ValueError(f"{flag} must name a file, got {shown!r}")
    if suffixes and path.suffix.lower() not in suffixes:
        raise ValueError(f"{flag} must end in {' or '.join(suffixes)}, got {shown!r}")
    target = output_target(path)
    try:
        kind = _kind(os.stat(target).st_mode)
    except (FileNotFoundError, NotADirectoryError):  # to be made; its folders are checked next
        kind = None
    except OSError as error:
        raise ValueError(f"{flag}: cannot use {shown!r}: {error.strerror or error}") from None
    if kind == "a directory":
        raise ValueError(f"{flag}: {shown!r} is a directory; give a file name")
    if kind is not None:
        raise ValueError(f"{flag}: {shown!r} is {kind}; give a regular file")
    if target.exists() and not os.access(target, os.W_OK):
        raise ValueError(f"{flag}: {shown!r} exists and is not writable")
    parent = target.parent
    while not parent.exists():  # the nearest existing ancestor must let us create the rest
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(
            f"{flag}: cannot create {shown!r}: {safe_text(parent)!r} is not a directory"
        )
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{target.name}.", suffix=".tmp"):
            pass
    except OSError as error:
        raise ValueError(
            f"{flag}: cannot write {shown!r}: no file can be created in directory "
            f"{safe_text(parent)!r} ({error.strerror or error})"
        ) from None
    return path
