"""Command-line pieces shared by ``evaluate.py``, ``train.py`` and ``python -m agents.play``:
one flag per rules option, so every program accepts the same ``--wilds kings`` spelling."""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import fields

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


def check_int(flag: str, value: object, low: int, high: int) -> int:
    """An integer flag within ``[low, high]``, or ``ValueError`` naming the flag and range."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{flag} must be an integer from {low} to {high:,}, got {value!r}")
    return value


def check_float(
    flag: str,
    value: object,
    low: float,
    high: float,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """A finite float flag within the given range (ends open or closed), else ``ValueError``
    naming the flag and the allowed values."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        if above and below:
            return float(value)
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    raise ValueError(f"{flag} must be a finite number in {interval}, got {value!r}")


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
