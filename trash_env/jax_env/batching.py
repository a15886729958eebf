"""Rare work under ``jax.vmap`` done only for the games that need it.

Under ``jax.vmap`` a ``lax.cond`` on a per-game predicate becomes a select: both branches run
for every game. :func:`where_needed` is a ``cond`` whose batching rule looks at the whole
batch instead: no game needs the work, nothing runs; else the games that need it are gathered
in chunks of a fixed size, the work runs on each chunk, and they are scattered back. The
rules' rare, heavy steps (a shuffle and the next deal, a new game in ``auto_reset``) go
through it, so the common step pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp
from jax import lax
from jax.custom_batching import custom_vmap

T = TypeVar("T")

# A batch's rare work runs on gathered chunks of it (by default a 128th of the batch, at
# least this many games), as many chunks as hold the games that need it.
_MIN_GATHER = 32
_GATHER_SHARE = 128


def passed_on(fn: Callable[[T], T], kept: list[bool]) -> Callable[[T], T]:
    """``fn``, noting in ``kept`` (when traced) which leaves of its argument it returns as
    they were (the same traced arrays)."""

    def traced(x: T) -> T:
        out = fn(x)
        kept[:] = [o is a for o, a in zip(jax.tree.leaves(out), jax.tree.leaves(x), strict=True)]
        return out

    return traced


def gather_size(batch: int, share: int = _GATHER_SHARE, least: int = _MIN_GATHER) -> int:
    """The games of a gathered chunk in a batch of ``batch``: ``batch // share``, at least
    ``least``, at most ``batch``."""
    return min(batch, max(least, batch // share))


def _as_words(a: jax.Array) -> jax.Array:
    """A one-number-a-game array as int32 words (bools as 0/1, 32-bit types bit for bit)."""
    if a.dtype == jnp.bool_:
        return a.astype(jnp.int32)
    return a if a.dtype == jnp.int32 else lax.bitcast_convert_type(a, jnp.int32)


def _from_words(words: jax.Array, like: jax.Array) -> jax.Array:
    if like.dtype == jnp.bool_:
        return words != 0
    return words if like.dtype == jnp.int32 else lax.bitcast_convert_type(words, like.dtype)


def _write_back(x: T, out: T, kept: list[bool], index: jax.Array) -> T:
    """``x`` with the rows ``index`` (out of range: dropped) of each array not ``kept`` set to
    ``out``'s: the arrays of one 32-bit number a game stacked into one scatter, each other
    array scattered alone."""
    leaves, treedef = jax.tree.flatten(x)
    outs = jax.tree.leaves(out)
    small = [
        i
        for i, (a, same) in enumerate(zip(leaves, kept, strict=True))
        if not same and a.ndim == 1 and (a.dtype == jnp.bool_ or a.dtype.itemsize == 4)
    ]
    new = list(leaves)
    if len(small) > 1:
        table = jnp.stack([_as_words(leaves[i]) for i in small], axis=1)
        rows = jnp.stack([_as_words(outs[i]) for i in small], axis=1)
        table = table.at[index].set(rows, mode="drop")
        for column, i in enumerate(small):
            new[i] = _from_words(table[:, column], leaves[i])
    for i, (a, o, same) in enumerate(zip(leaves, outs, kept, strict=True)):
        if not same and not (len(small) > 1 and i in small):
            new[i] = a.at[index].set(o, mode="drop")
    return jax.tree.unflatten(treedef, new)


def _cond(fn: Callable[[T], T], rule: Callable) -> Callable:
    """``lax.cond(pred, fn, identity, x)`` for one game, batched by ``rule`` under vmap."""

    @custom_vmap
    def apply(pred: jax.Array, x: T) -> T:
        return lax.cond(pred, fn, lambda v: v, x)

    apply.def_vmap(rule)
    return apply


def _batched(axis_size: int, in_batched: list, pred: jax.Array, x: T) -> tuple[jax.Array, T]:
    """``pred`` and every leaf of ``x`` with the batch axis, broadcast where vmap left it out."""
    pred_batched, x_batched = in_batched
    if not pred_batched:
        pred = jnp.broadcast_to(pred, (axis_size,))
    x = jax.tree.map(
        lambda a, b: a if b else jnp.broadcast_to(a, (axis_size, *jnp.shape(a))),
        x,
        x_batched,
    )
    return pred, x


def _on_the_batch(pred: jax.Array, fn: Callable[[T], T], x: T, keeps_others: bool = False) -> T:
    """The batching rule of ``when``, for a batch ``x`` and its ``pred``: ``fn`` for the whole
    batch, taken where ``pred`` holds, only if some game's does (for one game, or where
    ``fn`` itself ``keeps_others`` as they are, no select)."""

    def select(x: T) -> T:
        def pick(o: jax.Array, a: jax.Array) -> jax.Array:
            return jnp.where(pred.reshape(pred.shape + (1,) * (a.ndim - 1)), o, a)

        out = jax.vmap(fn)(x)
        return out if pred.shape[0] == 1 or keeps_others else jax.tree.map(pick, out, x)

    return lax.cond(pred.any(), select, lambda x: x, x)


def where_needed(
    pred: jax.Array,
    fn: Callable[[T], T],
    x: T,
    share: int = _GATHER_SHARE,
    least: int = _MIN_GATHER,
) -> T:
    """``fn(x)`` if ``pred`` else ``x`` (``fn`` keeps ``x``'s structure, shapes and dtypes);
    under ``jax.vmap``, ``fn`` runs only for the games whose ``pred`` holds, as said above,
    in chunks of ``gather_size(batch, share, least)`` games (one compilation of ``fn``); where
    one chunk would be the whole batch, as ``when`` (no gathers, no scatters)."""

    def _rule(axis_size: int, in_batched: list, pred: jax.Array, x: T) -> tuple[T, object]:
        pred, x = _batched(axis_size, in_batched, pred, x)
        size = gather_size(axis_size, share, least)
        if size >= axis_size:
            out = _on_the_batch(pred, fn, x)
            return out, jax.tree.map(lambda _: True, out)
        kept: list[bool] = []  # per leaf of x, whether fn hands it back as it was

        def gathered(x: T) -> T:
            # Every game that needs the work, listed once (then ``size`` fillers, so that
            # each chunk's slice lies inside), and the chunks that hold them.
            (listed,) = jnp.nonzero(pred, size=axis_size, fill_value=axis_size)
            listed = jnp.concatenate([listed, jnp.full(size, axis_size, listed.dtype)])
            chunks = (pred.sum() + size - 1) // size

            def chunk(i: jax.Array, x: T) -> T:
                index = lax.dynamic_slice(listed, (i * size,), (size,))
                safe = jnp.minimum(index, axis_size - 1)
                out = jax.vmap(passed_on(fn, kept))(jax.tree.map(lambda a: a[safe], x))
                # Only the arrays ``fn`` changed are written back, and those of one number a
                # game in one scatter (each scatter is a kernel of its own to compile).
                return _write_back(x, out, kept, index)

            return lax.fori_loop(0, chunks, chunk, x)

        out = lax.cond(pred.any(), gathered, lambda x: x, x)
        return out, jax.tree.map(lambda _: True, out)

    return _cond(fn, _rule)(jnp.asarray(pred, jnp.bool_), x)


def when(pred: jax.Array, fn: Callable[[T], T], x: T, keeps_others: bool = False) -> T:
    """``fn(x)`` if ``pred`` else ``x`` (``fn`` keeps ``x``'s structure, shapes and dtypes):
    a ``lax.cond`` whose batching rule runs ``fn`` for the whole batch, its results taken
    where ``pred`` holds, only when some game's ``pred`` holds (a batched ``lax.cond`` runs
    both branches for every game, always). ``keeps_others``: ``fn`` itself returns ``x`` as
    it is where ``pred`` fails, so its results are taken whole (no select per array)."""

    def _rule(axis_size: int, in_batched: list, pred: jax.Array, x: T) -> tuple[T, object]:
        pred, x = _batched(axis_size, in_batched, pred, x)
        out = _on_the_batch(pred, fn, x, keeps_others)
        return out, jax.tree.map(lambda _: True, out)

    return _cond(fn, _rule)(jnp.asarray(pred, jnp.bool_), x)


def while_any(cond: Callable[[T], jax.Array], body: Callable[[T], T], x: T) -> T:
    """``lax.while_loop(cond, body, x)`` for a ``body`` that leaves ``x`` as it is where
    ``cond`` fails. Under ``jax.vmap`` a loop with a per-game ``cond`` selects every leaf of
    every pass between ``body``'s result and the carry (a select per array, each fused with
    the predicate's computation); here the loop runs while any game's ``cond`` holds and
    takes ``body``'s result as it is, which the contract makes the same."""

    @custom_vmap
    def loop(x: T) -> T:
        return lax.while_loop(cond, body, x)

    @loop.def_vmap
    def _rule(axis_size: int, in_batched: list, x: T) -> tuple[T, object]:
        (x_batched,) = in_batched
        x = jax.tree.map(
            lambda a, b: a if b else jnp.broadcast_to(a, (axis_size, *jnp.shape(a))),
            x,
            x_batched,
        )
        out = lax.while_loop(lambda x: jax.vmap(cond)(x).any(), jax.vmap(body), x)
        return out, jax.tree.map(lambda _: True, out)

    return loop(x)
