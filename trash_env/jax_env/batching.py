"""Rare work under ``jax.vmap`` done only for the games that need it.

Under ``jax.vmap`` a ``lax.cond`` on a per-game predicate becomes a select: both branches run
for every game. :func:`where_needed` is a ``cond`` whose batching rule looks at the whole
batch instead: no game needs the work, nothing runs; a few do, they are gathered, the work
runs on them alone and they are scattered back; many do, it runs on the whole batch. The
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

# A batch's rare work runs on a gathered eighth of it (at least this many games) when that
# holds every game that needs it, else on the whole batch.
_MIN_GATHER = 4
_GATHER_SHARE = 8


def gather_size(batch: int) -> int:
    """How many games the gathered path serves at once in a batch of ``batch``."""
    return min(batch, max(_MIN_GATHER, batch // _GATHER_SHARE))


def where_needed(pred: jax.Array, fn: Callable[[T], T], x: T) -> T:
    """``fn(x)`` if ``pred`` else ``x`` (``fn`` keeps ``x``'s structure, shapes and dtypes);
    under ``jax.vmap``, ``fn`` runs only for the games whose ``pred`` holds, as said above."""

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
        size = gather_size(axis_size)
        count = pred.sum()

        def whole(x: T) -> T:
            out = jax.vmap(fn)(x)
            return jax.tree.map(lambda a, b: _select(pred, a, b), out, x)

        def gathered(x: T) -> T:
            (index,) = jnp.nonzero(pred, size=size, fill_value=axis_size)
            safe = jnp.minimum(index, axis_size - 1)
            out = jax.vmap(fn)(jax.tree.map(lambda a: a[safe], x))
            return jax.tree.map(lambda a, o: a.at[index].set(o, mode="drop"), x, out)

        def some(x: T) -> T:
            return lax.cond(count <= size, gathered, whole, x)

        out = lax.cond(count == 0, lambda v: v, some, x)
        return out, jax.tree.map(lambda _: True, out)

    return apply(jnp.asarray(pred, jnp.bool_), x)


def _select(pred: jax.Array, a: jax.Array, b: jax.Array) -> jax.Array:
    return jnp.where(pred.reshape(pred.shape + (1,) * (a.ndim - 1)), a, b)
