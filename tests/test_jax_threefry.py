"""``trash_env.jax_env.threefry``: the engine's key splits, shuffle bits and first player's
``randint`` are ``jax.random``'s, value for value; the benchmark's action draw, built on them,
is a uniform draw of a legal action."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="needs jax (the jax extra)")

# Each test compiles JAX programs (small ones, 9-20 s a file): the second tier (`pytest -m slow`).
pytestmark = pytest.mark.slow
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


def test_randint_is_jax_random_randint() -> None:
    """The first player's draw: ``jax.random.randint(key, (), 0, n)`` value for value, for
    every player count (and 1, 7 and 13 beside them)."""
    keys = jax.random.split(jax.random.PRNGKey(2028), 4099)
    for n in (1, 2, 3, 4, 5, 6, 7, 13):
        ours = jax.jit(jax.vmap(lambda k, n=n: threefry.randint(k, n)))(keys)
        theirs = jax.vmap(lambda k, n=n: jax.random.randint(k, (), 0, n, jnp.int32))(keys)
        assert ours.dtype == jnp.int32
        np.testing.assert_array_equal(ours, theirs)
    with jax.threefry_partitionable(False):
        key = jax.random.PRNGKey(9)
        assert int(threefry.randint(key, 5)) == int(jax.random.randint(key, (), 0, 5))


def test_other_key_settings_draw_through_jax_random() -> None:
    key = jax.random.PRNGKey(7)
    with jax.threefry_partitionable(False):  # jax's older split and bits
        np.testing.assert_array_equal(
            threefry.bits(key, 108), jax.random.bits(key, (108,), jnp.uint32)
        )
        np.testing.assert_array_equal(threefry.split(key)[1], jax.random.split(key)[1])
        np.testing.assert_array_equal(threefry.split_at(key, 0), jax.random.split(key)[0])
        np.testing.assert_array_equal(threefry.split_n(key, 5), jax.random.split(key, 5))


def _benchmark() -> object:
    """benchmarks/jax_engine.py as a module (it is a script, not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "jax_engine.py"
    spec = importlib.util.spec_from_file_location("jax_engine_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_benchmarks_action_draw_is_uniform_over_the_legal_actions() -> None:
    uniform = jax.jit(_benchmark()._uniform)  # type: ignore[attr-defined]
    draws = 26_000
    for legal in ([0, 1], [3, 5, 6, 9, 12], list(range(13)), [7]):
        mask = np.zeros((draws, 13), bool)
        mask[:, legal] = True
        picks = np.concatenate(
            [np.asarray(uniform(jax.random.PRNGKey(seed), jnp.asarray(mask))) for seed in (1, 2)]
        )
        assert set(picks.tolist()) == set(legal)
        counts = np.bincount(picks, minlength=13)[legal]
        expected = 2 * draws / len(legal)
        assert np.abs(counts - expected).max() < 5 * np.sqrt(expected)
    # Each game draws from its own mask: rows with different legal sets.
    rows = np.random.default_rng(0).random((draws, 13)) < 0.4
    rows[~rows.any(axis=1), 4] = True
    picks = np.asarray(uniform(jax.random.PRNGKey(3), jnp.asarray(rows)))
    assert rows[np.arange(draws), picks].all()


def test_importing_the_benchmark_leaves_jax_unstarted_so_cpu_devices_can_be_set() -> None:
    """``--cpu-devices`` sets ``jax_num_cpu_devices``, which jax accepts only before its
    backend starts (importing Pgx starts it): the script imports the engine lazily."""
    import subprocess
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "jax_engine.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('b', {str(path)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "from jax._src import xla_bridge\n"
        "sys.exit(1 if xla_bridge.backends_are_initialized() else 0)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=120).returncode == 0
