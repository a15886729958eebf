"""The folders the server may read: a file is named by the page, found only inside its folder.

Names from the page are hostile: only a plain file name (letters, digits, ``._-``, no path
separator, not starting with a dot) is looked up, and the resolved path must still lie inside
the folder (a symbolic link pointing out of it is refused).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}")
MAX_LISTED = 2000  # files a folder listing returns at most (newest first)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def confined(folder: Path, name: object, suffix: str) -> Path:
    """The existing file ``name`` of ``folder`` (ending in ``suffix``); ValueError otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or not name.endswith(suffix):
        raise ValueError(
            f"file name must be a plain {suffix} file name (letters, digits, '.', '_', '-'), "
            f"got {name!r}"[:300]
        )
    root = folder.resolve()
    path = (root / name).resolve()
    if not _inside(path, root) or not path.is_file():
        raise ValueError(f"no file {name!r} in the folder")
    return path


def listing(folder: Path | None, suffix: str) -> list[dict[str, Any]]:
    """The ``suffix`` files directly in ``folder``, newest first: name, size and time."""
    if folder is None or not folder.is_dir():
        return []
    root = folder.resolve()
    found: list[dict[str, Any]] = []
    for path in root.iterdir():
        if not (_NAME.fullmatch(path.name) and path.name.endswith(suffix)):
            continue
        try:
            if not _inside(path.resolve(), root) or not path.is_file():
                continue
            stat = path.stat()
        except OSError:
            continue
        found.append({"name": path.name, "bytes": stat.st_size, "modified": stat.st_mtime})
    found.sort(key=lambda f: (-f["modified"], f["name"]))
    return found[:MAX_LISTED]


def inside(folder: Path, path: Path) -> bool:
    """Whether ``path`` (resolved) lies in ``folder`` (resolved)."""
    return _inside(path.resolve(), folder.resolve())


RUN_MODEL = "model.safetensors"  # train.py's model in its run folder: runs/<name>/model.safetensors


def models(folder: Path | None, suffix: str) -> dict[str, Path]:
    """The models of ``folder`` by the name the page shows: its ``suffix`` files by file name,
    and every run folder's ``model.safetensors`` (train.py's ``runs/<name>/``) as
    ``<name><suffix>``; a file of that name directly in the folder comes first."""
    if folder is None or not folder.is_dir():
        return {}
    root = folder.resolve()
    found = {f["name"]: root / f["name"] for f in listing(root, suffix)}
    for run in sorted(root.iterdir()):
        name = run.name + suffix
        if name in found or not _NAME.fullmatch(name):
            continue
        candidate = run / RUN_MODEL
        try:
            if candidate.is_file() and _inside(candidate.resolve(), root):
                found[name] = candidate.resolve()
        except OSError:
            continue
        if len(found) >= MAX_LISTED:
            break
    return found


def model_file(folder: Path, name: str, suffix: str) -> Path:
    """The model the page names ``name`` in ``folder`` (see :func:`models`); ValueError
    otherwise."""
    if not _NAME.fullmatch(name) or not name.endswith(suffix):
        raise ValueError(
            f"file name must be a plain {suffix} file name (letters, digits, '.', '_', '-'), "
            f"got {name!r}"[:300]
        )
    found = models(folder, suffix)
    if name not in found:
        raise ValueError(f"no model {name!r} in the --models folder"[:300])
    return found[name]


def shown(folder: Path | None) -> str | None:
    """How the page names a folder: relative to the working directory when inside it, else by
    its name alone (the page has no business with the machine's absolute paths)."""
    if folder is None:
        return None
    try:
        return str(folder.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return folder.name or "."
