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

from collections.abc import Mapping
from typing import Any

import numpy as np

from trash_env.numba_cache import njit

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
def random_interval(rng: np.ndarray, high: int) -> np.int64:
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
def integers(rng: np.ndarray, n: int) -> np.int64:
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


def words_of(state: Mapping[str, Any]) -> np.ndarray:
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


# numpy's SeedSequence (pool of 4 uint32 words) and PCG64's seeding from it, so that a game's
# stream is made from its integer seed without a Python call per game.
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_L = np.uint64(0xCA01F9DD)
_MIX_R = np.uint64(0x4973F715)
_S16 = np.uint64(16)


@njit(cache=True, inline="always")
def _hashmix(value: np.uint64, hash_const: np.ndarray) -> np.uint64:
    value = (value ^ hash_const[0]) & _M32
    hash_const[0] = (hash_const[0] * _MULT_A) & _M32
    value = (value * hash_const[0]) & _M32
    return value ^ (value >> _S16)


@njit(cache=True, inline="always")
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    result = ((_MIX_L * x) - (_MIX_R * y)) & _M32
    return result ^ (result >> _S16)


@njit(cache=True)
def _step128(s_hi, s_lo, i_hi, i_lo):
    lo = s_lo * _MULT_LO
    hi = _mulhi(s_lo, _MULT_LO) + s_hi * _MULT_LO + s_lo * _MULT_HI
    new_lo = lo + i_lo
    carry = _ONE if new_lo < lo else _ZERO
    return hi + i_hi + carry, new_lo


@njit(cache=True)
def seed_words(seed: np.uint64, out: np.ndarray) -> None:
    """``out[:6]`` = the words of ``np.random.default_rng(seed)``'s fresh PCG64 (seed < 2**64)."""
    entropy = np.zeros(2, np.uint64)
    count = 1
    entropy[0] = seed & _M32
    if (seed >> _S32) != _ZERO:
        entropy[1] = seed >> _S32
        count = 2
    pool = np.zeros(4, np.uint64)
    hash_const = np.zeros(1, np.uint64)
    hash_const[0] = _INIT_A
    for i in range(4):
        pool[i] = _hashmix(entropy[i] if i < count else _ZERO, hash_const)
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], hash_const))
    words = np.zeros(8, np.uint64)
    h = _INIT_B
    for i in range(8):
        value = pool[i % 4] ^ h
        h = (h * _MULT_B) & _M32
        value = (value * h) & _M32
        words[i] = value ^ (value >> _S16)
    # generate_state(4, uint64): little-endian pairs of uint32 words.
    v0 = words[0] | (words[1] << _S32)
    v1 = words[2] | (words[3] << _S32)
    v2 = words[4] | (words[5] << _S32)
    v3 = words[6] | (words[7] << _S32)
    inc_hi = (v2 << _ONE) | (v3 >> _U63)
    inc_lo = (v3 << _ONE) | _ONE
    s_hi, s_lo = _step128(_ZERO, _ZERO, inc_hi, inc_lo)
    new_lo = s_lo + v1
    carry = _ONE if new_lo < s_lo else _ZERO
    s_hi, s_lo = _step128(s_hi + v0 + carry, new_lo, inc_hi, inc_lo)
    out[0] = s_hi
    out[1] = s_lo
    out[2] = inc_hi
    out[3] = inc_lo
    out[4] = _ZERO
    out[5] = _ZERO
