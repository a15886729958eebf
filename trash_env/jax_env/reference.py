"""The reference ``Game`` that plays the same game as a JAX key: same first player, same deal,
same reshuffles (for tests, replays and bug reports, as ``VectorGame.reference_game``)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from trash_env.engine import Game
from trash_env.jax_env.rules import first_player, shuffle_order
from trash_env.rules import Rules
from trash_env.rules_arrays import pile_capacity


@partial(jax.jit, static_argnums=(1,))
def _split_bits(key: jax.Array, capacity: int) -> tuple[jax.Array, jax.Array]:
    key, sub = jax.random.split(key)
    return key, shuffle_order(sub, jnp.int32(capacity), capacity)


class KeyChain(np.random.Generator):
    """A reference game's generator that draws as the JAX engine does from the same key,
    split for split: ``integers(n)`` (the first player) and ``shuffle`` (deals and
    reshuffles), the only draws ``Game`` makes. ``np.random.default_rng`` hands a Generator
    back unaltered, so ``Game(rules, seed=KeyChain(...))`` plays on it from the first draw."""

    def __init__(self, key: jax.Array, capacity: int) -> None:
        super().__init__(np.random.PCG64(0))  # never drawn from
        self.key = key
        self.capacity = capacity

    def integers(self, n: int) -> int:  # type: ignore[override]
        self.key, sub = jax.random.split(self.key)
        return int(first_player(sub, n))

    def shuffle(self, items: list[int]) -> None:  # type: ignore[override]
        # The engine sorts the first m of ``capacity`` random words, padding last; the
        # capacity-wide permutation's entries below m are the same order.
        self.key, order = _split_bits(self.key, self.capacity)
        m = len(items)
        perm = [int(i) for i in np.asarray(order) if i < m]
        items[:] = [items[i] for i in perm]

    def words(self) -> list[int]:
        """The key's words (what the engine's ``Game.key`` holds)."""
        return np.asarray(self.key).tolist()


def reference_game(rules: Rules, key: jax.Array) -> Game:
    """A reference ``Game`` dealt and driven by ``key`` as ``engine.init(key, ...)`` is (its
    generator is a :class:`KeyChain` of ``key``)."""
    return Game(rules, seed=KeyChain(key, pile_capacity(rules.total_cards)))  # type: ignore[arg-type]
