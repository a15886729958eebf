"""``trash_env.jax_env.threefry``: the engine's key splits and shuffle bits are
``jax.random``'s, value for value."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="needs jax (the jax extra)")
jnp = jax.numpy

from trash_env.jax_env import threefry  # noqa: E402


def test_written_out_threefry_draws_as_jax_random() -> None:
    keys = jax.random.split(jax.random.PRNGKey(2026), 257)
    for n in (1, 2, 3, 108, 648):
        ours = jax.jit(jax.vmap(lambda k, n=n: threefry.bits(k, n)))(keys)
        theirs = jax.vmap(lambda k, n=n: jax.random.bits(k, (n,), jnp.uint32))(keys)
        np.testing.assert_array_equal(ours, theirs)
    new, sub = jax.jit(jax.vmap(threefry.split))(keys)
    expected = jax.vmap(jax.random.split)(keys)
    np.testing.assert_array_equal(new, expected[:, 0])
    np.testing.assert_array_equal(sub, expected[:, 1])
    # A typed key goes through jax.random itself.
    typed = jax.random.key(5)
    ours = jax.random.key_data(threefry.split(typed)[1])
    np.testing.assert_array_equal(ours, jax.random.key_data(jax.random.split(typed)[1]))


def test_split_n_and_split_at_are_jax_random_split() -> None:
    keys = jax.random.split(jax.random.PRNGKey(2027), 257)
    for n in (1, 2, 3, 4096):
        ours = jax.jit(jax.vmap(lambda k, n=n: threefry.split_n(k, n)))(keys)
        np.testing.assert_array_equal(ours, jax.vmap(lambda k, n=n: jax.random.split(k, n))(keys))
    expected = jax.vmap(jax.random.split)(keys)
    for i in (0, 1):
        ours = jax.jit(jax.vmap(lambda k, i=i: threefry.split_at(k, i)))(keys)
        np.testing.assert_array_equal(ours, expected[:, i])
    typed = jax.random.key(5)
    for i in (0, 1):
        ours = jax.random.key_data(threefry.split_at(typed, i))
        np.testing.assert_array_equal(ours, jax.random.key_data(jax.random.split(typed)[i]))
    np.testing.assert_array_equal(
        jax.random.key_data(threefry.split_n(typed, 3)),
        jax.random.key_data(jax.random.split(typed, 3)),
    )


def test_other_key_settings_draw_through_jax_random() -> None:
    key = jax.random.PRNGKey(7)
    with jax.threefry_partitionable(False):  # jax's older split and bits
        np.testing.assert_array_equal(
            threefry.bits(key, 108), jax.random.bits(key, (108,), jnp.uint32)
        )
        np.testing.assert_array_equal(threefry.split(key)[1], jax.random.split(key)[1])
        np.testing.assert_array_equal(threefry.split_at(key, 0), jax.random.split(key)[0])
        np.testing.assert_array_equal(threefry.split_n(key, 5), jax.random.split(key, 5))
