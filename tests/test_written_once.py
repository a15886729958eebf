"""The logic written once in trash_env, held to what each former copy computed: the zero-sum
return formula (engine, numpy arrays, the compiled kernels), the batched payments, and the
masked sampling of a policy's logits (numpy's ``Generator.choice``, for a batch)."""

from __future__ import annotations

import importlib.util

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


def test_both_batched_engines_take_the_rules_arrays_from_one_derivation():
    """Pile capacities and the rules arrays are derived once (trash_env.rules_arrays): the
    numba engine's arrays and the JAX env's are that derivation's, value for value, and
    neither engine derives them itself."""
    from pathlib import Path

    from trash_env.rules_arrays import PILE_CAPACITIES, pile_capacity, rules_arrays

    assert [pile_capacity(c) for c in (52, 54, 55, 108, 109, 648)] == [54, 54, 108, 108, 648, 648]
    assert pile_capacity(52, least=108) == 108 and PILE_CAPACITIES[-1] == 648
    root = Path(__file__).resolve().parents[1] / "trash_env"
    sources = [root / "vector" / "batch.py", *sorted((root / "jax_env").glob("*.py"))]
    for path in sources:
        text = path.read_text()
        for derivation in ("build_deck(", "rank_totals(", "wild_table(", ".codes()", "CAPACITIES"):
            assert derivation not in text, f"{path.name} derives the rules arrays ({derivation})"
    for options in ({}, {"num_players": 4, "num_decks": 3, "jokers": True, "wilds": "faces"}):
        rules = Rules(**options)
        shared = rules_arrays(rules)
        assert len(shared.deck) == pile_capacity(rules.total_cards)
        if importlib.util.find_spec("numba") is not None:
            from trash_env.vector.batch import RulesArrays, card_capacity

            numba_arrays = RulesArrays(rules)
            wide = rules_arrays(rules, numba_arrays.deck.shape[0])
            for name in ("cfg", "wild", "totals", "deck"):
                assert getattr(numba_arrays, name).tolist() == getattr(wide, name).tolist(), name
            assert card_capacity(rules.total_cards) == len(wide.deck)
        if importlib.util.find_spec("jax") is not None:
            from trash_env.jax_env import make

            env = make(**options)
            for name in ("cfg", "wild", "totals", "deck"):
                assert getattr(env.arrays, name).tolist() == getattr(shared, name).tolist(), name


def test_the_modules_reading_a_rules_option_are_those_the_docs_name():
    """docs/development.md's "a new option touches" list names every module that reads an
    option's index (``CFG_*`` of trash_env.codes), and every file it names exists."""
    import re
    from pathlib import Path

    from trash_env import codes

    repo = Path(__file__).resolve().parents[1]
    doc = (repo / "docs" / "development.md").read_text()
    section = doc[doc.index("## Adding a rule option") :]
    section = section[: section.index("\n## ", 1)]
    named = set(re.findall(r"`((?:trash_env|agents|benchmarks|tests|docs)/[\w/.]+)`", section))
    for path in named:
        assert (repo / path).exists(), f"docs/development.md names {path}, which does not exist"
    options = {name for name in dir(codes) if name.startswith("CFG_")} - {"CFG_CARDS", "CFG_LEN"}
    readers = set()
    for path in (repo / "trash_env").rglob("*.py"):
        used = set(re.findall(r"\bCFG_[A-Z_]+\b", path.read_text()))
        if path.name != "codes.py" and used & options:
            readers.add(path.relative_to(repo).as_posix())
    assert readers, "no module reads a rules option: the check reads the wrong files"
    assert readers <= named, f"modules that read an option, not in the list: {readers - named}"
