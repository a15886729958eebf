"""The batched engine's re-implementation of numpy's PCG64 draws (trash_env/vector/_pcg.py).

Every game of a batch must draw exactly what ``Game(rules, seed=s)`` draws from
``np.random.default_rng(s)``: the seeding (SeedSequence + PCG64), ``integers(n)`` and
``shuffle``, in any interleaving.
"""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.vector._pcg import (
    integers,
    next_uint64,
    rng_words,
    seed_words,
    shuffle,
    state_of,
)

SEEDS = [0, 1, 2, 5, 2**31, 2**32 - 1, 2**32, 2**32 + 5, 2**63 - 1, 2**63, 2**64 - 1]
SEEDS += np.random.default_rng(0).integers(2**63, size=60).tolist()


@pytest.mark.parametrize("seed", SEEDS)
def test_seeding_matches_numpy(seed: int) -> None:
    words = np.zeros(6, np.uint64)
    seed_words(np.uint64(seed), words)
    assert words.tolist() == rng_words(seed).tolist()
    assert state_of(words) == np.random.PCG64(seed).state


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_draws_match_numpy_in_any_order(seed: int) -> None:
    words = rng_words(seed)
    reference = np.random.default_rng(seed)
    assert [int(next_uint64(words)) for _ in range(3)] == [
        int(reference.bit_generator.random_raw()) for _ in range(3)
    ]
    order = np.random.default_rng(seed + 1)
    for _ in range(40):
        if order.random() < 0.5:
            n = int(order.integers(1, 7))
            assert integers(words, n) == int(reference.integers(n))
        else:
            size = int(order.integers(0, 120))
            mine = np.arange(size, dtype=np.int8)
            theirs = list(range(size))
            shuffle(words, mine, size)
            reference.shuffle(theirs)
            assert mine.tolist() == theirs
    assert state_of(words) == reference.bit_generator.state
