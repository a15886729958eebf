"""numpy's PCG64 bit generator and the two draws ``Game`` makes from it, compiled by numba.

Why: a game of the batch must be reproducible as a reference ``Game``: ``Game(rules,
seed=s)`` draws its first player with ``rng.integers(n)`` and shuffles every deal and reshuffle
with ``rng.shuffle``. Re-implementing exactly those draws on the same PCG64 state (numpy's
``PCG64``, XSL-RR output, 128-bit LCG; ``next_uint32`` halves a 64-bit output and keeps the
upper half for the next call; ``random_interval`` for shuffles, Lemire's method for
``integers``) makes game ``i`` of the batch step for step the reference game of its seed. The
state lives in four ``uint64`` words and a buffered half per game, in the batch's arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S58 = np.uint64(58)
_U63 = np.uint64(63)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)


@njit(cache=True, inline="always")
def _mulhi(a: np.uint64, b: np.uint64) -> np.uint64:
    """The upper 64 bits of the 128-bit product of two uint64."""
    a_lo = a & _M32
    a_hi = a >> _S32
    b_lo = b & _M32
    b_hi = b >> _S32
    lolo = a_lo * b_lo
    lohi = a_lo * b_hi
    hilo = a_hi * b_lo
    hihi = a_hi * b_hi
    cross = (lolo >> _S32) + (hilo & _M32) + lohi
    return hihi + (hilo >> _S32) + (cross >> _S32)


@njit(cache=True)
def next_uint64(rng: np.ndarray) -> np.uint64:
    """One PCG64 output; ``rng`` = [state_hi, state_lo, inc_hi, inc_lo, has_uint32, uinteger]."""
    s_hi = rng[0]
    s_lo = rng[1]
    lo = s_lo * _MULT_LO
    hi = _mulhi(s_lo, _MULT_LO) + s_hi * _MULT_LO + s_lo * _MULT_HI
    new_lo = lo + rng[3]
    carry = _ONE if new_lo < lo else _ZERO
    new_hi = hi + rng[2] + carry
    rng[0] = new_hi
    rng[1] = new_lo
    rot = new_hi >> _S58
    x = new_hi ^ new_lo
    return (x >> rot) | (x << ((_ZERO - rot) & _U63))


@njit(cache=True)
def next_uint32(rng: np.ndarray) -> np.uint64:
    if rng[4] != _ZERO:
        rng[4] = _ZERO
        return rng[5]
    value = next_uint64(rng)
    rng[4] = _ONE
    rng[5] = value >> _S32
    return value & _M32


@njit(cache=True)
def random_interval(rng: np.ndarray, high: int) -> int:
    """A uniform integer in [0, high] by masked rejection (numpy's ``random_interval``)."""
    if high == 0:
        return np.int64(0)
    top = np.uint64(high)
    mask = top
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    mask |= mask >> np.uint64(32)
    value = next_uint32(rng) & mask
    while value > top:
        value = next_uint32(rng) & mask
    return np.int64(value)


@njit(cache=True)
def integers(rng: np.ndarray, n: int) -> int:
    """``Generator.integers(n)`` for 1 <= n < 2**32 (Lemire's bounded method on 32 bits)."""
    if n == 1:
        return np.int64(0)
    excl = np.uint64(n)
    m = next_uint32(rng) * excl
    leftover = m & _M32
    if leftover < excl:
        threshold = (_M32 - (excl - _ONE)) % excl
        while leftover < threshold:
            m = next_uint32(rng) * excl
            leftover = m & _M32
    return np.int64(m >> _S32)


@njit(cache=True)
def shuffle(rng: np.ndarray, values: np.ndarray, count: int) -> None:
    """``Generator.shuffle`` of ``values[:count]`` in place (Fisher-Yates from the end)."""
    for i in range(count - 1, 0, -1):
        j = random_interval(rng, i)
        tmp = values[i]
        values[i] = values[j]
        values[j] = tmp


RNG_WORDS = 6


def rng_words(seed: int | np.random.SeedSequence | None) -> np.ndarray:
    """The uint64 words of ``np.random.default_rng(seed)``'s fresh PCG64 state."""
    state = np.random.PCG64(seed).state
    return words_of(state)


def words_of(state: dict) -> np.ndarray:
    mask = (1 << 64) - 1
    inner = state["state"]
    return np.array(
        [
            inner["state"] >> 64,
            inner["state"] & mask,
            inner["inc"] >> 64,
            inner["inc"] & mask,
            int(state["has_uint32"]),
            int(state["uinteger"]),
        ],
        np.uint64,
    )


def state_of(words: np.ndarray) -> dict:
    """The ``PCG64.state`` dict of these words (to hand a batch game's rng back to numpy)."""
    w = [int(x) for x in words]
    return {
        "bit_generator": "PCG64",
        "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
        "has_uint32": w[4],
        "uinteger": w[5],
    }
