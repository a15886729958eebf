"""Files written and names shown safely: atomic writes (a crash never leaves half a file),
output paths checked before any work, and names from files or paths escaped before they reach
a terminal."""

from __future__ import annotations

import os
import tempfile
import unicodedata
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


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory and ``os.replace``:
    a crash or a full disk leaves the old file whole (or no file), never half a new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)  # check_output_path allowed creating it
    handle = tempfile.NamedTemporaryFile(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False
    )
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
        os.replace(handle.name, path)
    except BaseException:
        try:
            os.unlink(handle.name)
        except OSError:
            pass
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """:func:`atomic_write_bytes` of UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


IMAGE_SUFFIXES = (".png",)


def check_output_path(flag: str, value: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """Check before any work that ``value`` can be written as a file: not a directory, its
    directory exists (or can be made) and is writable, and its suffix is one of ``suffixes``
    when given. ``ValueError`` naming ``flag`` otherwise."""
    path = Path(value)
    if str(value) == "" or path.name in ("", ".", ".."):
        raise ValueError(f"{flag} must name a file, got {str(value)!r}")
    if suffixes and path.suffix.lower() not in suffixes:
        raise ValueError(f"{flag} must end in {' or '.join(suffixes)}, got {str(path)!r}")
    if path.is_dir():
        raise ValueError(f"{flag}: {str(path)!r} is a directory; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{flag}: {str(path)!r} exists and is not writable")
    parent = path.parent
    while not parent.exists():  # the nearest existing ancestor must let us create the rest
        if parent == parent.parent:
            break
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{flag}: cannot create {str(path)!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(
            f"{flag}: cannot write {str(path)!r}: directory {str(parent)!r} is not writable"
        )
    return path
