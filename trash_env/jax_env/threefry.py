"""``jax.random.split`` (whole, one of its two keys, or into ``n``) and ``jax.random.bits`` for
the engine's raw ``uint32[2]`` keys, the same values, with the Threefry-2x32 hash written out
round by round.

On the CPU, jax lowers its Threefry hash as a loop of five iterations (to keep compilation
short); inside the engine's batched loops each call is then a loop of its own, which XLA
cannot fuse with the work around it. Written out, the hash is one fusion. The values are
``jax.random``'s (tested: tests/test_jax_threefry.py), under jax's default key handling
(``jax_threefry_partitionable``, the ``threefry2x32`` implementation); under any other
setting these functions call ``jax.random`` itself.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

_U32 = np.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = _U32(0x1BD11BDA)


def _rotate_left(x: jax.Array, d: int) -> jax.Array:
    return (x << _U32(d)) | (x >> _U32(32 - d))


def hash_2x32(key: jax.Array, x1: jax.Array, x2: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Threefry-2x32 (20 rounds) of the counter pairs ``(x1, x2)`` under ``key``: jax's
    ``threefry2x32`` primitive, round by round."""
    ks = (key[0], key[1], key[0] ^ key[1] ^ _PARITY)
    a, b = x1 + ks[0], x2 + ks[1]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            a = a + b
            b = a ^ _rotate_left(b, r)
        a = a + ks[(i + 1) % 3]
        b = b + ks[(i + 2) % 3] + _U32(i + 1)
    return a, b


def _written_out(key: jax.Array) -> bool:
    """Whether ``key`` is a raw key whose draws :func:`hash_2x32` reproduces (decided at
    trace time)."""
    return (
        key.dtype == jnp.uint32
        and key.shape == (2,)
        and bool(getattr(jax.config, "jax_threefry_partitionable", False))
        and getattr(jax.config, "jax_default_prng_impl", None) == "threefry2x32"
    )


def split(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``jax.random.split(key)`` of a raw ``uint32[2]`` key, as its two keys."""
    if not _written_out(key):
        new, sub = jax.random.split(key)
        return new, sub
    a, b = hash_2x32(key, jnp.zeros(2, _U32), jnp.arange(2, dtype=_U32))
    return jnp.stack([a[0], b[0]]), jnp.stack([a[1], b[1]])


def _once(keys: jax.Array) -> jax.Array:
    """``keys``, computed once: XLA would otherwise copy the whole hash into every fusion
    that reads a key (the engine's selects of the game's key among them)."""
    return jax.lax.optimization_barrier(keys)


def split_n(key: jax.Array, n: int) -> jax.Array:
    """``jax.random.split(key, n)`` of a raw ``uint32[2]`` key: ``(n, 2)``."""
    if not _written_out(key):
        return jax.random.split(key, n)
    a, b = hash_2x32(key, jnp.zeros(n, _U32), jnp.arange(n, dtype=_U32))
    return _once(jnp.stack([a, b], axis=-1))


def split_at(key: jax.Array, i: int) -> jax.Array:
    """``jax.random.split(key)[i]`` alone (``i`` 0 or 1): half the hashing of :func:`split`,
    for a caller that needs the other key only some of the time."""
    if not _written_out(key):
        return jax.random.split(key)[i]
    a, b = hash_2x32(key, jnp.uint32(0), jnp.uint32(i))
    return _once(jnp.stack([a, b]))


def randint(key: jax.Array, n: int) -> jax.Array:
    """``jax.random.randint(key, (), 0, n, jnp.int32)`` of a raw ``uint32[2]`` key (``n`` a
    positive int): its two words of bits, each reduced modulo ``n``, combined as jax does."""
    if not _written_out(key):
        return jax.random.randint(key, (), 0, n, jnp.int32)
    high_key, low_key = split(key)
    high, low = bits(high_key, 1)[0], bits(low_key, 1)[0]
    span = _U32(n)
    multiplier = _U32((2**16 % n) ** 2 % n)
    return (((high % span) * multiplier + low % span) % span).astype(jnp.int32)


def bits(key: jax.Array, n: int) -> jax.Array:
    """``jax.random.bits(key, (n,), uint32)`` of a raw ``uint32[2]`` key."""
    if not _written_out(key):
        return jax.random.bits(key, (n,), jnp.uint32)
    a, b = hash_2x32(key, jnp.zeros(n, _U32), jnp.arange(n, dtype=_U32))
    return a ^ b
