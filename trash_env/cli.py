"""Command-line pieces shared by ``evaluate.py``, ``train.py`` and ``python -m agents.play``:
one flag per rules option, so every program accepts the same ``--wilds kings`` spelling."""

from __future__ import annotations

import argparse
import math
import os
import re
import tempfile
import unicodedata
from dataclasses import fields
from pathlib import Path

from trash_env.rules import Rules, option_spec


def whole_number(text: str) -> int:
    """argparse type: an integer 0 or more, with a clear message otherwise."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number 0 or more, got {text!r}")
    return value


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
        raise ValueError(f"{flag}: cannot create {str(path)!r}: {str(parent)!r} is not a "
                         "directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{flag}: cannot write {str(path)!r}: directory {str(parent)!r} is "
                         "not writable")
    return path


def check_int(flag: str, value: object, low: int, high: int) -> int:
    """An integer flag within ``[low, high]``, or ``ValueError`` naming the flag and range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{flag} must be an integer from {low} to {high:,}, got {value!r}")
    return value


def check_float(flag: str, value: object, low: float, high: float, low_open: bool = False,
                high_open: bool = False) -> float:
    """A finite float flag within the given range (ends open or closed), else ``ValueError``
    naming the flag and the allowed values."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > low if low_open else value >= low) and (
            value < high if high_open else value <= high)
    if not ok:
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{flag} must be a finite number in {interval}, got {value!r}")
    return float(value)


def option_docs() -> dict[str, str]:
    """Each rules option's sentence, from the ``Attributes:`` list of the Rules docstring."""
    docs: dict[str, str] = {}
    name = None
    for line in (Rules.__doc__ or "").split("Attributes:")[-1].splitlines():
        head, colon, text = line.strip().partition(": ")
        if colon and head.isidentifier() and line.startswith(" " * 8 + head):
            name = head
            docs[name] = text
        elif name and line.strip():
            docs[name] += " " + line.strip()
    plain = {key: re.sub(r'``"?([^`"]*)"?``', r"\1", value) for key, value in docs.items()}
    return {key: value.replace("%", "%%") for key, value in plain.items()}


def add_rules_arguments(
    parser: argparse.ArgumentParser, default_help: dict[str, str] | None = None
) -> None:
    """One flag per Rules field (unset flags keep the standard game); read back with
    :func:`rules_options`. ``default_help`` replaces the "(default: ...)" text of an option."""
    group = parser.add_argument_group("rules options (docs/rules.md; defaults: the standard game)")
    defaults, docs = Rules(), option_docs()
    for field in fields(Rules):
        spec = option_spec(field)  # flags and choices come from the field's metadata
        default = getattr(defaults, field.name)
        kwargs: dict = {"dest": field.name, "default": argparse.SUPPRESS}
        if isinstance(default, bool):
            kwargs["action"] = argparse.BooleanOptionalAction
            shown = "on" if default else "off"
        elif isinstance(default, str):
            kwargs["choices"] = spec["choices"]
            shown = default
        else:  # int, or None meaning "automatic"/"off"
            kwargs["type"] = int
            kwargs["metavar"] = "N"
            shown = "not set" if default is None else default
        note = (default_help or {}).get(field.name, f"(default: {shown})")
        kwargs["help"] = f"{docs.get(field.name, field.name)} {note}"
        group.add_argument(*spec["flags"], **kwargs)


def rules_options(args: argparse.Namespace) -> dict:
    """The rules options given on the command line (the others keep their defaults)."""
    return {f.name: getattr(args, f.name) for f in fields(Rules) if hasattr(args, f.name)}
