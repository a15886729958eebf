"""JSON from untrusted sources (model sidecars, checkpoint documents, state strings),
bounded before it is parsed: its size, its nesting depth (counted on the text, since json's
recursion on 100,000 brackets is slow or a RecursionError), no NaN or Infinity constants. A
value that breaks a bound is a ``ValueError`` naming where it came from."""

from __future__ import annotations

import json
from typing import Any

from trash_env.files import safe_text

MAX_JSON_BYTES = 2**20
MAX_JSON_DEPTH = 16


def json_depth(value: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON value, stopping early past ``limit``."""
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return 0
    deepest = 0
    for child in children:
        deepest = max(deepest, 1 + json_depth(child, limit))
        if deepest > limit:
            break
    return deepest


def parse_json(
    text: str | bytes,
    where: str,
    max_bytes: int = MAX_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """JSON from an untrusted source, bounded in size and nesting depth (``ValueError``)."""
    if len(text) > max_bytes:
        raise ValueError(f"{where}: {len(text)} bytes of JSON, more than the {max_bytes} allowed")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(f"{where}: not UTF-8 text ({error})") from None
    # Depth before parsing: json's recursion on 100,000 brackets is slow or a RecursionError.
    depth = peak = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            peak = max(peak, depth)
            if peak > max_depth:
                raise ValueError(f"{where}: JSON nested deeper than {max_depth} levels")
        elif char in "]}":
            depth -= 1
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{where}: not valid JSON ({safe_text(error)})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
