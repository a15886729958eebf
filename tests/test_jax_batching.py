"""``trash_env.jax_env.batching``: per game ``where_needed`` and ``when`` are ``cond(pred, fn,
identity)``; under ``jax.vmap`` ``where_needed``'s ``fn`` runs for no game, the gathered few,
or the whole batch, and ``when``'s for no game or the whole batch. ``while_any`` is
``lax.while_loop`` for a body that keeps the games whose condition fails."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="needs jax (the jax extra)")

# Each test compiles JAX programs (small ones, 9-20 s a file): the second tier (`pytest -m slow`).
pytestmark = pytest.mark.slow
jnp = jax.numpy

from trash_env.jax_env.batching import gather_size, when, where_needed, while_any  # noqa: E402


def _work(x: tuple) -> tuple:
    a, b = x
    return a * 10 + 1, jnp.sort(b)[::-1]


def _expected(pred: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple:
    a2, b2 = jax.vmap(_work)((a, b))
    return np.where(pred, a2, a), np.where(pred[:, None], b2, b)


@pytest.mark.parametrize("share", [8, 16])
@pytest.mark.parametrize("needed", [0, 3, 6, 40, 64, 100])
def test_vmap_equals_the_per_game_cond_and_runs_only_where_needed(needed: int, share: int) -> None:
    batch = 512
    rng = np.random.default_rng(needed)
    pred = np.zeros(batch, bool)
    pred[rng.choice(batch, needed, replace=False)] = True
    a = np.arange(batch, dtype=np.int32)
    b = rng.integers(0, 100, (batch, 7)).astype(np.int32)
    runs: list[int] = []

    def counted(x: tuple) -> tuple:
        jax.debug.callback(lambda a: runs.append(np.size(a)), x[0])  # games it ran for
        return _work(x)

    out = jax.jit(jax.vmap(lambda p, a, b: where_needed(p, counted, (a, b), share)))(pred, a, b)
    jax.block_until_ready(out)
    for got, want in zip(out, _expected(pred, a, b), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    size = gather_size(batch, share)
    assert size == batch // share
    # fn runs on as many chunks of ``size`` games as hold the games that need it
    assert sum(runs) == -(-needed // size) * size
    # unbatched (jit alone): a plain cond
    one = jax.jit(lambda p, a, b: where_needed(p, _work, (a, b)))(pred[0], a[0], b[0])
    np.testing.assert_array_equal(np.asarray(one[0]), _expected(pred, a, b)[0][0])


def test_inside_a_batched_while_loop_and_nested_vmap() -> None:
    def game(a: jax.Array, b: jax.Array) -> tuple:
        def body(c: tuple) -> tuple:
            i, a, b = c
            a, b = where_needed(a % 3 == 0, _work, (a, b))
            return i + 1, a + 1, b

        return jax.lax.while_loop(lambda c: c[0] < a % 4, body, (0, a, b))[1:]

    a = np.arange(24, dtype=np.int32)
    b = np.arange(24 * 5, dtype=np.int32).reshape(24, 5)
    batched = jax.jit(jax.vmap(game))(a, b)
    nested = jax.jit(jax.vmap(jax.vmap(game)))(a.reshape(4, 6), b.reshape(4, 6, 5))
    one = [jax.jit(game)(a[i], b[i]) for i in range(24)]
    for i in range(24):
        assert int(batched[0][i]) == int(one[i][0]) == int(nested[0].reshape(-1)[i])
        np.testing.assert_array_equal(np.asarray(batched[1][i]), np.asarray(one[i][1]))


def _mixed(x: tuple) -> tuple:
    """Work on arrays of one number a game of every 32-bit kind and a bool (written back in
    one scatter by ``where_needed``), one it leaves as it was, and a row."""
    i, f, u, flag, same, row = x
    return i * 3 - 1, f * 0.5 - 2.25, u ^ np.uint32(0xF0F0F0F0), ~flag, same, row[::-1]


@pytest.mark.parametrize("helper", ["where_needed", "when"])
def test_every_kind_of_array_comes_back_as_the_per_game_cond_gives_it(helper: str) -> None:
    batch = 96
    rng = np.random.default_rng(7)
    pred = rng.random(batch) < 0.2
    x = (
        rng.integers(-1000, 1000, batch).astype(np.int32),
        rng.standard_normal(batch).astype(np.float32),
        rng.integers(0, 2**32, batch, dtype=np.uint64).astype(np.uint32),
        rng.random(batch) < 0.5,
        rng.integers(0, 9, batch).astype(np.int32),
        rng.integers(0, 50, (batch, 5)).astype(np.int32),
    )
    runs: list[int] = []

    def counted(x: tuple) -> tuple:
        jax.debug.callback(lambda a: runs.append(np.size(a)), x[0])
        return _mixed(x)

    if helper == "where_needed":
        batched = jax.vmap(lambda p, *x: where_needed(p, counted, x, 8))
    else:
        batched = jax.vmap(lambda p, *x: when(p, counted, x))
    out = jax.jit(batched)(pred, *x)
    per_game = jax.vmap(lambda p, *x: jax.lax.cond(p, _mixed, lambda v: v, x))(pred, *x)
    for got, want in zip(out, per_game, strict=True):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert runs and sum(runs) <= batch
    runs.clear()
    jax.block_until_ready(jax.jit(batched)(np.zeros(batch, bool), *x))
    assert runs == []  # no game needs it: fn does not run
    one = jax.jit(lambda p, *x: when(p, _mixed, x))(pred[0], *(a[0] for a in x))
    for got, want in zip(one, per_game, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want)[0])


@pytest.mark.parametrize("batch", [1, 20])
def test_a_batch_of_one_chunk_runs_fn_once_on_it_without_gathers(batch: int) -> None:
    """Where the chunk would be the whole batch (``gather_size`` of it is the batch), fn runs
    once on the batch and its results are taken where ``pred`` holds: no gather, no
    scatter in the program."""
    assert gather_size(batch) == batch
    rng = np.random.default_rng(batch)
    a = np.arange(batch, dtype=np.int32)
    b = rng.integers(0, 100, (batch, 7)).astype(np.int32)
    runs: list[int] = []

    def counted(x: tuple) -> tuple:
        jax.debug.callback(lambda a: runs.append(np.size(a)), x[0])
        return _work(x)

    program = jax.jit(jax.vmap(lambda p, a, b: where_needed(p, counted, (a, b))))
    for pred in (np.arange(batch) % 3 == 0, np.zeros(batch, bool)):
        runs.clear()
        out = program(pred, a, b)
        jax.block_until_ready(out)
        for got, want in zip(out, _expected(pred, a, b), strict=True):
            np.testing.assert_array_equal(np.asarray(got), want)
        assert sum(runs) == (batch if pred.any() else 0)  # one call a game
    text = program.lower(pred, a, b).compile().as_text()
    assert " gather(" not in text and " scatter(" not in text


def _count_down(x: tuple) -> tuple:
    """A body that keeps the games whose loop has ended (``n`` at 0) as they are."""
    n, total = x
    going = n > 0
    return jnp.where(going, n - 1, n), jnp.where(going, total * 3 + n, total)


def test_while_any_equals_the_per_game_loop_and_stops_with_the_last_game() -> None:
    """Under vmap ``while_any`` gives each game what its own ``lax.while_loop`` gives, and
    runs as many passes as the longest game needs (no select of its own: the body keeps
    the finished games)."""
    rng = np.random.default_rng(3)
    n = rng.integers(0, 9, 64).astype(np.int32)
    total = rng.integers(-5, 5, 64).astype(np.int32)
    passes: list[int] = []

    def counted(x: tuple) -> tuple:
        jax.debug.callback(lambda: passes.append(1))
        return _count_down(x)

    def cond(x: tuple) -> jax.Array:
        return x[0] > 0

    got = jax.jit(jax.vmap(lambda *x: while_any(cond, counted, x)))(n, total)
    want = jax.vmap(lambda *x: jax.lax.while_loop(cond, _count_down, x))(n, total)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert len(passes) == int(n.max())
    one = jax.jit(lambda *x: while_any(cond, _count_down, x))(n[0], total[0])
    assert [int(a) for a in one] == [int(np.asarray(w)[0]) for w in want]


def test_when_keeps_others_takes_fn_whole() -> None:
    """``when(..., keeps_others=True)`` takes ``fn``'s results as they are: equal to the
    selected form for an ``fn`` that keeps the other games, and (what the flag promises
    away) not selected for one that does not."""
    pred = np.array([True, False, True, False])
    x = np.arange(4, dtype=np.int32)

    def keeps(p: jax.Array, a: jax.Array) -> tuple:
        return p, jnp.where(p, a * 7, a)

    def changes_all(p: jax.Array, a: jax.Array) -> tuple:
        return p, a * 7

    whole = jax.jit(jax.vmap(lambda p, a: when(p, lambda c: keeps(*c), (p, a), True)))
    np.testing.assert_array_equal(np.asarray(whole(pred, x)[1]), np.where(pred, x * 7, x))
    unselected = jax.jit(jax.vmap(lambda p, a: when(p, lambda c: changes_all(*c), (p, a), True)))
    np.testing.assert_array_equal(np.asarray(unselected(pred, x)[1]), x * 7)
    selected = jax.jit(jax.vmap(lambda p, a: when(p, lambda c: changes_all(*c), (p, a))))
    np.testing.assert_array_equal(np.asarray(selected(pred, x)[1]), np.where(pred, x * 7, x))
