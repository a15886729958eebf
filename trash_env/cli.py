"""Command-line pieces shared by ``evaluate.py``, ``train.py``, ``python -m agents.play`` and
the examples: one parser class, so every program names itself the way it was started and
answers a bad flag alike, and one flag per rules option, so every program accepts the same
``--wilds kings`` spelling."""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import re
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import fields
from typing import NoReturn

from trash_env.rules import Rules, option_spec


def program_name(command: str, console: str | None = None) -> str:
    """How the running program was started, for its usage line: the console script's name
    (``trash-train``) when that is what ran, else ``command`` (``python train.py``)."""
    if console is not None and os.path.basename(sys.argv[0] or "") == console:
        return console
    return command


class Parser(argparse.ArgumentParser):
    """The ``ArgumentParser`` of every command line here: ``--help`` prints the whole text,
    but a bad flag prints one short usage line (the required arguments, ``[options]``) and the
    one-line reason, not the usage block of every flag."""

    def format_usage(self) -> str:
        required = [a for a in self._actions if a.required or not a.option_strings]
        formatter = self._get_formatter()
        formatter.add_usage(None, required, [], prefix="usage: ")
        line = formatter.format_help().strip()
        return f"{line} [options]  (see --help)\n"

    def error(self, message: str) -> NoReturn:
        self.exit(self.refuse(message))

    def refuse(self, message: object) -> int:
        """Print the short usage line and ``prog: error: message`` on stderr (only the latter
        for :class:`MissingModules`: the flags were right); returns 2, the exit code of a bad
        option."""
        from trash_env.files import safe_text

        usage = "" if isinstance(message, MissingModules) else self.format_usage()
        sys.stderr.write(f"{usage}{self.prog}: error: {safe_text(message)}\n")
        return 2


EXIT_INTERRUPT, EXIT_TERMINATED = 130, 128 + signal.SIGTERM


class Terminated(BaseException):
    """SIGTERM as an exception, so that what a program started is stopped on the way out and
    its ``finally`` blocks run, as for Ctrl-C."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def run_interruptible(prog: str, work: Callable[[], int], note: Callable[[], str] = str) -> int:
    """``work()``'s exit code; Ctrl-C and SIGTERM end it with one line (``prog: interrupted``
    and what ``note()`` then says) and the shell's codes 130 and 143, never a traceback."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        return work()
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted{note()}", file=sys.stderr)
        return EXIT_INTERRUPT
    except Terminated:
        print(f"{prog}: terminated{note()}", file=sys.stderr)
        return EXIT_TERMINATED
    finally:
        if in_main_thread and previous is not None:  # None: set outside Python, left as is
            signal.signal(signal.SIGTERM, previous)


class MissingModules(ValueError):
    """An optional library that what was asked for needs is not installed (the message says
    which install brings it)."""


def missing_modules(*modules: str) -> list[str]:
    """Those of ``modules`` that cannot be imported here (not installed)."""
    missing = []
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def extra_install(extra: str) -> str:
    """The command that installs one of this project's extras (in a clone or not)."""
    return f'pip install "trash-env[{extra}]"'


def need_modules(purpose: str, install: str, *modules: str) -> None:
    """``ValueError`` in one line when one of ``modules`` is missing: what needs it and the
    command that installs it (:func:`extra_install`), before any work is done."""
    missing = missing_modules(*modules)
    if missing:
        raise MissingModules(
            f"{purpose} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            f"not installed: {install}"
        )


def whole_number(text: str) -> int:
    """argparse type: an integer 0 or more, with a clear message otherwise."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number 0 or more, got {text!r}")
    return value


def integer_in(low: int, high: int) -> Callable[[str], int]:
    """argparse type for a flag whose range :func:`check_int` checks with the other flags:
    text that is no integer is refused with that same range (``--games abc`` and
    ``--games 0`` name one rule)."""

    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer from {low} to {high:,}, got {text!r}"
            ) from None

    return parse


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


# Where a Rules docstring sentence speaks Python (``None``), the command line's own sentence.
_FLAG_HELP = {
    "num_decks": "the number of 52-card decks (default: half the players, rounded up)",
    "jokers": "add 2 jokers per deck; jokers are always wild, whatever --wilds says",
    "max_deals": "end the game after N deals: the smallest layout wins, equal sizes share the "
    "win (default: no limit)",
}


def flag_help() -> dict[str, str]:
    """Each rules option's help on the command line: its docstring sentence, with option names
    written as the flags a user types (``--losers-reveal``, not ``losers_reveal``)."""
    docs = option_docs()
    flags = {f.name: option_spec(f)["flags"][0] for f in fields(Rules) if "_" in f.name}
    names = re.compile(r"\b(" + "|".join(sorted(flags, key=len, reverse=True)) + r")\b")
    out = {}
    for name, text in docs.items():
        text = _FLAG_HELP.get(name, text)
        out[name] = names.sub(lambda match: flags[match.group(1)], text)
    return out


def add_rules_arguments(
    parser: argparse.ArgumentParser, default_help: dict[str, str] | None = None
) -> None:
    """One flag per Rules field (unset flags keep the standard game); read back with
    :func:`rules_options`. ``default_help`` replaces the "(default: ...)" text of an option."""
    group = parser.add_argument_group("rules options (docs/rules.md; defaults: the standard game)")
    defaults, docs = Rules(), flag_help()
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
        text = docs.get(field.name, field.name)
        note = (default_help or {}).get(field.name, f"(default: {shown})")
        kwargs["help"] = text if "(default:" in text else f"{text} {note}"
        group.add_argument(*spec["flags"], **kwargs)


def rules_options(args: argparse.Namespace) -> dict:
    """The rules options given on the command line (the others keep their defaults)."""
    return {f.name: getattr(args, f.name) for f in fields(Rules) if hasattr(args, f.name)}
