"""Endgame tables: the value and an optimal action of every decision state of the 2-player
rounds with layout sizes ``a <= b <= K`` (a round ``(b, a)`` is read with the seats mirrored).

File format (no pickle): the magic line ``trash-exact-tables\\n``, the header's length as 8
bytes little-endian, the header (JSON: format version, rules, K, the objective, per round its
state count, start values and the offsets of its arrays, the payload's length and SHA-256),
then the payload: per round its sorted ``uint64`` state keys, ``float64`` values (seat 0's)
and ``int8`` optimal engine actions. Every field is checked on loading; any damage, a foreign
file or a table for other rules fails in one sentence.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trash_env.exact.graph import TERMINALS, Graph, state_key
from trash_env.exact.model import DRAW, SWAP, WILD, Model, State, check_rules
from trash_env.exact.policies import greedy_action
from trash_env.files import atomic_write_bytes
from trash_env.rules import Rules

MAGIC = b"trash-exact-tables\n"
FORMAT = "trash_env exact tables"
# 3: graph.state_key, values the limit of ever later cut-offs wherever the equations leave a
# value open; 2 held another solution there, 1 had other keys: both are refused.
VERSION = 3
OBJECTIVE = (
    "env return: P(seat 0 wins the round) - P(seat 1 wins), the limit as T grows of the round "
    "cut off after T turns and paying 0 there (where it alternates with T's parity, the mean)"
)
MAX_HEADER = 1 << 20
MAX_K = 10
_ARRAYS = (("keys", np.uint64), ("values", np.float64), ("actions", np.int8))


class TableError(ValueError):
    """A table file that cannot be used (damaged, foreign, other rules, too small)."""


def pairs(max_size: int) -> list[tuple[int, int]]:
    """The rounds a table of size ``max_size`` holds: ``(a, b)`` with ``1 <= a <= b <= K``."""
    return [(a, b) for b in range(1, max_size + 1) for a in range(1, b + 1)]


def rules_key(rules: Rules) -> dict:
    """The options a table depends on (the episode and cut-off are the env's, not the round's).
    Kings wild is the Jacks-wild game with two ranks renamed (one wild face rank, the other two
    dead, the same card classes), so both read the Jacks tables."""
    check_rules(rules)
    return {"wilds": "jacks", "jokers": rules.jokers}


def preferred_actions(graph: Graph) -> np.ndarray:
    """Per node the index of greedy's action: the tie-break among optimal actions, so that the
    tables play as greedy does wherever greedy is optimal (greedy never passes)."""
    out = np.full(graph.nodes, -1, dtype=np.int64)
    for i, state in enumerate(graph.states):
        node = TERMINALS + i
        wanted = greedy_action(graph.model, state)
        for j in range(graph.action_ptr[node], graph.action_ptr[node + 1]):
            if graph.actions[j] == wanted:
                out[node] = j
    return out


@dataclass
class Round:
    """One solved round: its states' keys (sorted, :func:`~trash_env.exact.graph.state_key`),
    values and optimal actions."""

    sizes: tuple[int, int]
    keys: np.ndarray
    values: np.ndarray
    actions: np.ndarray
    start_values: tuple[float, float]
    open_states: int = 0  # states whose value the cut-off recursion settled (not stored)
    alternating_states: int = 0  # of those, the ones whose cut-off values alternate


def solve_round(sizes: tuple[int, int], rules: Rules, progress: Callable | None = None) -> Round:
    """Enumerate and solve the round ``sizes`` (``a <= b``) in compiled code, layout pair by
    layout pair (:mod:`trash_env.exact.rounds`)."""
    try:
        from trash_env.exact.rounds import enumerate_states, solve_states  # numba
    except ImportError:
        raise ValueError(
            "building exact tables needs numba: pip install 'trash-env[vector]'"
        ) from None

    model = Model(sizes, rules)
    keys = enumerate_states(model, progress)
    solved = solve_states(model, keys, progress=progress)
    starts = (float(solved.start_value(0)), float(solved.start_value(1)))
    return Round(
        sizes,
        keys,
        solved.values,
        solved.best,
        starts,
        solved.cutoff.open_states,
        solved.cutoff.alternating_states,
    )


class Tables:
    """Solved rounds under one set of rules; :meth:`lookup` answers for any state."""

    def __init__(self, rules: Rules, max_size: int, rounds: dict[tuple[int, int], Round]) -> None:
        self.rules = rules
        self.max_size = max_size
        self.rounds = rounds

    def covers(self, sizes: tuple[int, int]) -> bool:
        return tuple(sorted(sizes)) in self.rounds

    def lookup(self, sizes: tuple[int, int], state: State) -> tuple[float, int]:
        """The value (for the player to act) and an optimal engine action of ``state``."""
        a, b = sizes
        if not self.covers(sizes):
            raise ValueError(
                f"the exact tables cover 2-player rounds with layouts up to {self.max_size} "
                f"slots; this round has layouts of {a} and {b}"
            )
        mirrored = a > b
        if mirrored:
            state = state._replace(slots=(state.slots[1], state.slots[0]), player=1 - state.player)
        model = Model((min(a, b), max(a, b)), self.rules)
        if state.phase not in (DRAW, WILD, SWAP):
            raise ValueError("the exact tables hold decision states only")
        found = self.rounds[model.sizes]
        key = np.uint64(state_key(model, state))
        i = int(np.searchsorted(found.keys, key))
        if i >= len(found.keys) or found.keys[i] != key:
            raise ValueError(f"state not in the exact tables of round {sizes}: {state}")
        value = float(found.values[i])
        return (value if state.player == 0 else -value), int(found.actions[i])

    def start_value(self, sizes: tuple[int, int], first: int) -> float:
        """Seat 0's value of the deal at ``sizes`` with seat ``first`` to draw first."""
        a, b = sizes
        if a <= b:
            return self.rounds[(a, b)].start_values[first]
        return -self.rounds[(b, a)].start_values[1 - first]

    # ------------------------------------------------------------------ the file

    def to_bytes(self) -> bytes:
        payload = bytearray()
        entries = []
        for sizes in sorted(self.rounds):
            found = self.rounds[sizes]
            arrays = {}
            for name, dtype in _ARRAYS:
                data = np.ascontiguousarray(getattr(found, name), dtype=dtype).tobytes()
                arrays[name] = [len(payload), len(data)]
                payload += data
            entries.append(
                {
                    "sizes": list(sizes),
                    "states": len(found.keys),
                    "start_values": list(found.start_values),
                    "arrays": arrays,
                }
            )
        header = {
            "format": FORMAT,
            "version": VERSION,
            "rules": rules_key(self.rules),
            "max_size": self.max_size,
            "objective": OBJECTIVE,
            "rounds": entries,
            "payload_bytes": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        text = json.dumps(header, sort_keys=True).encode("utf-8")
        return MAGIC + len(text).to_bytes(8, "little") + text + bytes(payload)

    def save(self, path: str | Path) -> None:
        atomic_write_bytes(path, self.to_bytes())

    @classmethod
    def from_bytes(cls, data: bytes, rules: Rules, name: str = "table") -> Tables:
        def fail(why: str) -> TableError:
            return TableError(f"{name} is not a usable exact-tables file: {why}")

        if not data.startswith(MAGIC):
            raise fail("it does not start with the exact tables' magic line")
        start = len(MAGIC) + 8
        if len(data) < start:
            raise fail("it is truncated")
        length = int.from_bytes(data[len(MAGIC) : start], "little")
        if length > MAX_HEADER or len(data) < start + length:
            raise fail("its header is truncated or longer than 1 MiB")
        try:
            header = json.loads(data[start : start + length].decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise fail("its header is not JSON") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise fail("its header names another format")
        version = header.get("version")
        if version != VERSION:
            raise fail(
                f"it is version {version!r} and this code reads version {VERSION} (older "
                "tables hold other values after a reshuffle): rebuild it with "
                "python -m trash_env.exact build"
            )
        if header.get("rules") != rules_key(rules):
            raise fail(f"it was solved for rules {header.get('rules')!r}, not {rules_key(rules)!r}")
        payload = data[start + length :]
        if header.get("payload_bytes") != len(payload):
            raise fail("its payload is truncated or has extra bytes")
        if hashlib.sha256(payload).hexdigest() != header.get("sha256"):
            raise fail("its checksum does not match (the file was changed or damaged)")
        try:
            max_size = int(header["max_size"])
            rounds = {}
            for entry in header["rounds"]:
                a, b = (int(x) for x in entry["sizes"])
                states = int(entry["states"])
                arrays: dict[str, np.ndarray] = {}
                for field, dtype in _ARRAYS:
                    offset, size = (int(x) for x in entry["arrays"][field])
                    width = np.dtype(dtype).itemsize
                    if size != states * width or offset < 0 or offset + size > len(payload):
                        raise fail(f"round ({a}, {b}): array {field} has the wrong length")
                    found = np.frombuffer(payload, dtype=dtype, count=states, offset=offset)
                    # An array after another's odd length lies unaligned, and numpy copies an
                    # unaligned array whole on every binary search: copy it once here.
                    arrays[field] = found if found.flags.aligned else found.copy()
                if states > 1 and not np.all(arrays["keys"][1:] > arrays["keys"][:-1]):
                    raise fail(f"round ({a}, {b}): its state keys are not strictly increasing")
                v0, v1 = (float(x) for x in entry["start_values"])
                rounds[(a, b)] = Round(
                    (a, b), arrays["keys"], arrays["values"], arrays["actions"], (v0, v1)
                )
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, TableError):
                raise
            raise fail("its header lacks a field or has one of the wrong type") from None
        if not 1 <= max_size <= MAX_K or sorted(rounds) != sorted(pairs(max_size)):
            raise fail(f"it does not hold every round up to K = {max_size}")
        return cls(rules, max_size, rounds)

    @classmethod
    def load(cls, path: str | Path, rules: Rules) -> Tables:
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise TableError(f"cannot read exact tables {path}: {error.strerror}") from None
        return cls.from_bytes(data, rules, name=str(path))


def build(rules: Rules, max_size: int, progress: bool = True) -> Tables:
    """Solve every round up to ``max_size`` (a progress bar per round)."""
    rules_key(rules)
    if isinstance(max_size, bool) or not isinstance(max_size, int) or not 1 <= max_size <= MAX_K:
        raise ValueError(f"max_size must be an integer from 1 to {MAX_K}, got {max_size!r}")
    rounds = {}
    for sizes in pairs(max_size):
        if progress:
            from tqdm import tqdm

            with tqdm(desc=f"round {sizes}", unit=" states", unit_scale=True) as bar:
                rounds[sizes] = solve_round(sizes, rules, bar.update)
        else:
            rounds[sizes] = solve_round(sizes, rules)
    return Tables(rules, max_size, rounds)


def cache_dir() -> Path:
    """Where tables built on first use are kept: ``$TRASH_ENV_CACHE/exact`` or
    ``~/.cache/trash-env/exact``."""
    root = os.environ.get("TRASH_ENV_CACHE") or Path.home() / ".cache" / "trash-env"
    return Path(root) / "exact"


def table_name(rules: Rules, max_size: int) -> str:
    key = rules_key(rules)
    wilds = key["wilds"] + ("-jokers" if key["jokers"] else "")
    # The format in the name: a cache of older tables is left alone and a new one built.
    return f"tables-{wilds}-K{max_size}-v{VERSION}.bin"


SHIPPED = Path(__file__).resolve().parent / "data"


def built_table(rules: Rules, max_size: int) -> Path | None:
    """The file of the tables up to ``max_size`` where one is already built (shipped with the
    package, or in the cache folder), else None."""
    name = table_name(rules, max_size)
    for folder in (SHIPPED, cache_dir()):
        if (folder / name).is_file():
            return folder / name
    return None


def tables_for(rules: Rules, max_size: int, progress: bool = True) -> Tables:
    """The tables up to ``max_size``: shipped with the package, else from the cache folder,
    else built there now (with a progress bar) and kept."""
    path = built_table(rules, max_size)
    if path is not None:
        return Tables.load(path, rules)
    name = table_name(rules, max_size)
    tables = build(rules, max_size, progress)
    tables.save(cache_dir() / name)
    return tables
