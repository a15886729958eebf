"""The logic written once in trash_env, held to what each former copy computed: the zero-sum
return formula (engine, numpy arrays, the compiled kernels), the batched payments, and the
masked sampling of a policy's logits (numpy's ``Generator.choice``, for a batch)."""

from __future__ import annotations

import numpy as np
import pytest

from trash_env.engine import Game, zero_sum_share
from trash_env.rules import Rules
from trash_env.sampling import masked_choice


def _written_out(won: bool, k: int, n: int) -> float:
    """The formula as the engine, the batch and the kernels each wrote it before."""
    share = n / k
    return ((share if won else 0.0) - 1.0) / (n - 1)


@pytest.mark.parametrize("n", range(2, 7))
def test_the_engine_the_arrays_and_the_kernels_compute_the_same_returns(n):
    game = Game(Rules(num_players=n), seed=0)
    for k in range(1, n + 1):
        winners = tuple(range(k))
        expected = [_written_out(p in winners, k, n) for p in range(n)]
        assert game.shares_to_returns(winners) == expected
        assert abs(sum(expected)) < 1e-12
        won = np.array([p in winners for p in range(n)])
        assert zero_sum_share(won, np.full(n, k), n).tolist() == expected
    assert game.shares_to_returns(()) == [0.0] * n


def test_the_kernels_compile_the_engines_own_formula():
    pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")
    from trash_env.vector import _kernels as K

    assert K.zero_sum_share.py_func is zero_sum_share
    for n in range(2, 7):
        for k in range(1, n + 1):
            for won in (0, 1):
                assert K.zero_sum_share(np.uint8(won), k, n) == _written_out(bool(won), k, n)


def test_batched_payments_are_the_deal_shares_plus_the_returns():
    pytest.importorskip("numba", reason="the batched engine needs numba (the vector extra)")
    from trash_env.vector import VectorGame

    batch = VectorGame(Rules(num_players=3, start_size=2), 64, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(60):
        masks = batch.action_masks().astype(bool)
        pick = (masks.cumsum(1) <= rng.random((64, 1)) * masks.sum(1, keepdims=True)).sum(1)
        batch.step(pick)
        deals = batch.games["deal_reward"][:, :3].copy()
        returns = batch.returns()
        assert np.array_equal(batch.payments(False), returns)
        assert not batch.games["deal_reward"].any()  # read and cleared
        batch.games["deal_reward"][:, :3] = deals
        assert np.array_equal(batch.payments(True), deals + returns)


def test_masked_sampling_draws_as_numpys_choice_and_never_a_masked_action():
    rng = np.random.default_rng(1)
    for trial in range(3000):
        logits = rng.normal(size=13) * rng.choice([0.1, 1.0, 5.0, 30.0])
        legal = rng.random(13) < 0.4
        legal[trial % 13] = True
        masked = np.where(legal, logits, -np.inf)
        probs = np.exp(masked - masked.max())
        probs /= probs.sum()
        seed = int(rng.integers(2**32))
        expected = np.random.default_rng(seed).choice(13, p=probs)
        assert masked_choice(logits, legal, np.random.default_rng(seed), False) == expected
        batch = np.stack([logits, rng.normal(size=13)])
        first = masked_choice(batch, np.stack([legal, legal]), np.random.default_rng(seed), False)
        assert first[0] == expected and legal[first].all()
    assert masked_choice(np.arange(13.0), np.eye(13, dtype=bool)[4], rng, True) == 4
