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


def where_needed(
    pred: jax.Array,
    fn: Callable[[T], T],
    x: T,
    share: int = _GATHER_SHARE,
    least: int = _MIN_GATHER,
) -> T:
    """``fn(x)`` if ``pred`` else ``x`` (``fn`` keeps ``x``'s structure, shapes and dtypes);
    under ``jax.vmap``, ``fn`` runs only for the games whose ``pred`` holds, as said above,
    in chunks of ``gather_size(batch, share, least)`` games (one compilation of ``fn``)."""

    @custom_vmap
    def apply(pred: jax.Array, x: T) -> T:
        return lax.cond(pred, fn, lambda v: v, x)

    @apply.def_vmap
    def _rule(axis_size: int, in_batched: list, pred: jax.Array, x: T) -> tuple[T, object]:
        pred_batched, x_batched = in_batched
        if not pred_batched:
            pred = jnp.broadcast_to(pred, (axis_size,))
        x = jax.tree.map(
            lambda a, b: a if b else jnp.broadcast_to(a, (axis_size, *jnp.shape(a))),
            x,
            x_batched,
        )
        size = gather_size(axis_size, share, least)
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
                # Only the arrays ``fn`` changed are written back (each scatter is a kernel
                # of its own to compile).
                return jax.tree.map(
                    lambda a, o, same: a if same else a.at[index].set(o, mode="drop"),
                    x,
                    out,
                    jax.tree.unflatten(jax.tree.structure(x), kept),
                )

            return lax.fori_loop(0, chunks, chunk, x)

        out = lax.cond(pred.any(), gathered, lambda x: x, x)
        return out, jax.tree.map(lambda _: True, out)

    return apply(jnp.asarray(pred, jnp.bool_), x)
