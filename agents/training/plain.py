"""Objects as plain data: a JSON tree plus a list of arrays, and back, with no code from the
data ever run.

A checkpoint holds live objects (the envs mid-episode, random generators, an optimizer's
state). They are written as JSON (numbers, strings, lists, objects) and raw array bytes, and
read back by building only what the reader allows: the classes of an explicit table
(``classes``), created with ``object.__new__`` and given their attributes, never a callable
named by the data. Shared references and cycles are kept (``{"ref": n}``), as pickle keeps
them, so that a restored env is the same object graph as the one saved. Reading is bounded
(nodes, depth, integer and string sizes) and checks every node's shape: anything else is a
``ValueError`` saying where.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

# name -> (class, its value as plain data, the value back from plain data)
Converter = tuple[type, Callable[[Any], Any], Callable[[Any], Any]]

MAX_NODES = 20_000_000
MAX_DEPTH = 200
MAX_INT_BITS = 256  # bit generator states are 128-bit
MAX_STRING = 1 << 20
BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


def class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def slot_names(cls: type) -> list[str]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return [n for n in names if n not in ("__dict__", "__weakref__")]


class Encoder:
    """Turns a value into a JSON tree; the arrays it meets go to ``arrays`` (raw bytes)."""

    def __init__(
        self, classes: dict[str, type], converters: dict[str, Converter] | None = None
    ) -> None:
        self.classes = {cls: name for name, cls in classes.items()}
        self.converters = converters or {}
        self.classes.update({conv[0]: name for name, conv in self.converters.items()})
        self.arrays: list[np.ndarray] = []
        self.memo: dict[int, int] = {}
        self.keep: list[Any] = []  # memoised objects stay alive, so ids stay unique

    def encode(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, str)):
            return value
        if type(value) is int:
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, np.generic) and not isinstance(value, np.void):
            return {"scalar": value.dtype.str, "value": self.encode(value.item())}
        key = id(value)
        if key in self.memo:
            return {"ref": self.memo[key]}
        self.memo[key] = len(self.memo)
        self.keep.append(value)
        node = {"id": self.memo[key]}
        node.update(self._encode_new(value))
        return node

    def _encode_new(self, value: Any) -> dict[str, Any]:
        cls = type(value)
        if cls is list:
            return {"list": [self.encode(v) for v in value]}
        if cls is tuple:
            return {"tuple": [self.encode(v) for v in value]}
        if cls is dict:
            return {"dict": [[self.encode(k), self.encode(v)] for k, v in value.items()]}
        if cls is deque:
            return {"deque": [self.encode(v) for v in value], "maxlen": value.maxlen}
        if cls in (set, frozenset):
            return {cls.__name__: [self.encode(v) for v in value]}
        if cls is np.ndarray:
            if value.dtype.hasobject:
                raise ValueError("cannot store an array of Python objects")
            self.arrays.append(np.frombuffer(np.ascontiguousarray(value).tobytes(), np.uint8))
            return {
                "array": len(self.arrays) - 1,
                "dtype": _dtype_json(value.dtype),
                "shape": list(value.shape),
            }
        if isinstance(value, np.dtype):
            return {"dtype": _dtype_json(value)}
        if cls is np.random.Generator:
            bits = value.bit_generator
            return {"generator": type(bits).__name__, "state": self.encode(bits.state)}
        if cls is np.random.RandomState:
            return {"random_state": self.encode(value.get_state(legacy=False))}
        name = self.classes.get(cls)
        if name is None:
            raise ValueError(f"cannot store a {class_name(cls)} (not a plain-data class)")
        if isinstance(value, enum.Enum):
            return {"enum": name, "value": self.encode(value.value)}
        if isinstance(value, tuple):  # a NamedTuple
            return {"namedtuple": name, "items": [self.encode(v) for v in value]}
        if name in self.converters:  # e.g. Rules: rebuilt through its own checks
            return {"plain": name, "value": self.encode(self.converters[name][1](value))}
        state = dict(vars(value)) if hasattr(value, "__dict__") else {}
        for slot in slot_names(cls):
            if hasattr(value, slot):
                state[slot] = getattr(value, slot)
        return {"object": name, "state": [[k, self.encode(v)] for k, v in state.items()]}


def _dtype_json(dtype: np.dtype) -> Any:
    return (
        dtype.str
        if dtype.names is None and dtype.subdtype is None
        else [list(field) for field in dtype.descr]
    )


def _dtype_of(spec: Any, where: str) -> np.dtype:
    def field(item: Any) -> tuple:
        if (
            isinstance(item, list)
            and len(item) in (2, 3)
            and isinstance(item[0], str)
            and (isinstance(item[1], str) or isinstance(item[1], list))
        ):
            rest = (tuple(item[2]),) if len(item) == 3 else ()
            inner = _dtype_of(item[1], where) if isinstance(item[1], list) else item[1]
            return (item[0], inner, *rest)
        raise ValueError(f"{where}: a bad array field type {item!r:.80}")

    try:
        if isinstance(spec, str) and len(spec) <= 16:
            dtype = np.dtype(spec)
        elif isinstance(spec, list) and len(spec) <= 256:
            dtype = np.dtype([field(item) for item in spec])
        else:
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(f"{where}: a bad array type {spec!r:.80}") from None
    if dtype.hasobject:
        raise ValueError(f"{where}: arrays of Python objects are not stored")
    return dtype


class Decoder:
    """Builds values back from a JSON tree and its arrays; only the ``classes`` given."""

    def __init__(
        self,
        classes: dict[str, type],
        arrays: list[np.ndarray],
        where: str,
        converters: dict[str, Converter] | None = None,
    ) -> None:
        self.converters = converters or {}
        self.classes = {**classes, **{name: conv[0] for name, conv in self.converters.items()}}
        self.arrays = arrays
        self.where = where
        self.memo: dict[int, Any] = {}
        self.nodes = 0

    def fail(self, what: str) -> ValueError:
        return ValueError(f"{self.where}: {what}")

    def decode(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES or depth > MAX_DEPTH:
            raise self.fail("too large or too deeply nested")
        if node is None or isinstance(node, (bool, float)):
            return node
        if isinstance(node, int):
            if node.bit_length() > MAX_INT_BITS:
                raise self.fail("an integer too large")
            return node
        if isinstance(node, str):
            if len(node) > MAX_STRING:
                raise self.fail("a string too long")
            return node
        if isinstance(node, list):
            raise self.fail("a bare list where a tagged value belongs")
        if not isinstance(node, dict):
            raise self.fail(f"an unexpected value {node!r:.60}")
        if "float" in node:
            if set(node) != {"float"} or node["float"] not in ("nan", "inf", "-inf"):
                raise self.fail("a bad float")
            return float(node["float"])
        if "scalar" in node:
            if set(node) != {"scalar", "value"}:
                raise self.fail("a bad numpy scalar")
            dtype = _dtype_of(node["scalar"], self.where)
            if dtype.kind not in "biufc":
                raise self.fail("a bad numpy scalar type")
            value = self.decode(node["value"], depth + 1)
            if isinstance(value, (dict, list, tuple, str)) or value is None:
                raise self.fail("a bad numpy scalar value")
            return dtype.type(value)
        if "ref" in node:
            if set(node) != {"ref"} or node["ref"] not in self.memo:
                raise self.fail("a reference to nothing stored before it")
            return self.memo[node["ref"]]
        ident = node.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool) or ident in self.memo:
            raise self.fail("a value without a fresh id")
        kinds = set(node) - {"id"}
        return self._decode_new(node, ident, kinds, depth + 1)

    def _items(self, node: dict, key: str) -> list:
        items = node[key]
        if not isinstance(items, list):
            raise self.fail(f"{key} must hold a list")
        return items

    def _decode_new(self, node: dict, ident: int, kinds: set, depth: int) -> Any:
        memo, dec = self.memo, self.decode
        if kinds == {"list"}:
            out: list = []
            memo[ident] = out
            out.extend(dec(v, depth) for v in self._items(node, "list"))
            return out
        if kinds == {"tuple"}:
            memo[ident] = value = tuple(dec(v, depth) for v in self._items(node, "tuple"))
            return value
        if kinds in ({"set"}, {"frozenset"}):
            (kind,) = kinds
            items = [dec(v, depth) for v in self._items(node, kind)]
            self._hashable(items)
            memo[ident] = members = set(items) if kind == "set" else frozenset(items)
            return members
        if kinds == {"deque", "maxlen"}:
            maxlen = node["maxlen"]
            if maxlen is not None and (not isinstance(maxlen, int) or maxlen < 0):
                raise self.fail("a bad deque length")
            queue: deque[Any] = deque(maxlen=maxlen)
            memo[ident] = queue
            queue.extend(dec(v, depth) for v in self._items(node, "deque"))
            return queue
        if kinds == {"dict"}:
            out_dict: dict = {}
            memo[ident] = out_dict
            for pair in self._items(node, "dict"):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise self.fail("a bad dict item")
                key = dec(pair[0], depth)
                self._hashable([key])
                out_dict[key] = dec(pair[1], depth)
            return out_dict
        if kinds == {"array", "dtype", "shape"}:
            return self._array(node, ident)
        if kinds == {"dtype"}:
            memo[ident] = dtype = _dtype_of(node["dtype"], self.where)
            return dtype
        if kinds == {"generator", "state"}:
            bits = (
                BIT_GENERATORS.get(node["generator"])
                if isinstance(node["generator"], str)
                else None
            )
            if bits is None:
                raise self.fail(f"an unknown bit generator {node['generator']!r:.40}")
            generator = np.random.Generator(bits())
            generator.bit_generator.state = self._state(dec(node["state"], depth))
            memo[ident] = generator
            return generator
        if kinds == {"random_state"}:
            legacy = np.random.RandomState()
            legacy.set_state(self._state(dec(node["random_state"], depth)))
            memo[ident] = legacy
            return legacy
        cls = None
        for kind in ("enum", "namedtuple", "plain", "object"):
            if kind in kinds:
                if not isinstance(node[kind], str) or node[kind] not in self.classes:
                    raise self.fail(f"a class that is not allowed ({node[kind]!r:.80})")
                cls = self.classes[node[kind]]
                break
        if cls is None:
            raise self.fail(f"an unknown kind of value ({sorted(kinds)!r:.80})")
        if kinds == {"enum", "value"} and issubclass(cls, enum.Enum):
            try:
                memo[ident] = member = cls(dec(node["value"], depth))
            except (TypeError, ValueError):
                raise self.fail(f"a bad {cls.__name__} value") from None
            return member
        if kinds == {"namedtuple", "items"} and issubclass(cls, tuple):
            items = [dec(v, depth) for v in self._items(node, "items")]
            if len(items) != len(cls._fields):  # type: ignore[attr-defined]
                raise self.fail(f"a {cls.__name__} of {len(items)} fields")
            memo[ident] = value = cls(*items)
            return value
        if kinds == {"plain", "value"} and node["plain"] in self.converters:
            memo[ident] = value = self.converters[node["plain"]][2](dec(node["value"], depth))
            return value
        if kinds == {"object", "state"} and not issubclass(cls, (tuple, enum.Enum)):
            obj = object.__new__(cls)
            memo[ident] = obj
            slots = set(slot_names(cls))
            for pair in self._items(node, "state"):
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not isinstance(pair[0], str)
                    or not pair[0].isidentifier()
                ):
                    raise self.fail(f"a bad attribute of a {cls.__name__}")
                name, value = pair[0], dec(pair[1], depth)
                if name in slots:
                    object.__setattr__(obj, name, value)
                elif hasattr(obj, "__dict__"):
                    obj.__dict__[name] = value
                else:
                    raise self.fail(f"a {cls.__name__} has no attribute {name!r:.40}")
            return obj
        raise self.fail(f"a malformed {cls.__name__}")

    def _hashable(self, items: list) -> None:
        for item in items:
            try:
                hash(item)
            except TypeError:
                raise self.fail("an unhashable key") from None

    def _state(self, state: Any) -> Any:
        if not isinstance(state, dict):
            raise self.fail("a bad generator state")
        return state

    def _array(self, node: dict, ident: int) -> np.ndarray:
        index, shape = node["array"], node["shape"]
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < len(self.arrays)
        ):
            raise self.fail("a reference to a missing array")
        if (
            not isinstance(shape, list)
            or len(shape) > 32
            or not all(
                isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**40 for s in shape
            )
        ):
            raise self.fail("a bad array shape")
        dtype = _dtype_of(node["dtype"], self.where)
        raw = self.arrays[index]
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise self.fail("a stored array that is not raw bytes")
        if raw.size != dtype.itemsize * math.prod(shape):
            raise self.fail(f"an array of {raw.size} bytes for shape {shape} of {dtype}")
        array = raw.view(dtype).reshape(shape).copy() if raw.size else np.zeros(shape, dtype)
        self.memo[ident] = array
        return array


def encode(
    value: Any, classes: dict[str, type], converters: dict[str, Converter] | None = None
) -> tuple[Any, list[np.ndarray]]:
    """``value`` as a JSON tree and its arrays (raw bytes); ``ValueError`` for a class not in
    ``classes`` (objects stored attribute by attribute) or ``converters`` (name -> (class,
    to plain data, from plain data), for classes rebuilt through their own checks)."""
    encoder = Encoder(classes, converters)
    return encoder.encode(value), encoder.arrays


def decode(
    tree: Any,
    arrays: list[np.ndarray],
    classes: dict[str, type],
    where: str,
    converters: dict[str, Converter] | None = None,
) -> Any:
    """The value :func:`encode` stored, built from plain data and the ``classes`` and
    ``converters`` allowed; ``ValueError`` starting with ``where`` otherwise."""
    try:
        return Decoder(classes, arrays, where, converters).decode(tree)
    except ValueError:
        raise
    except (
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        RecursionError,
    ) as error:
        raise ValueError(f"{where}: malformed ({type(error).__name__}: {error})"[:300]) from None
