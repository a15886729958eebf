"""The reference ``Game`` that plays the same game as a JAX key: same first player, same deal,
same reshuffles (for tests, replays and bug reports, as ``VectorGame.reference_game``)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from trash_env.cards import build_deck
from trash_env.engine import Game
from trash_env.jax_env.engine import card_capacity, first_player, shuffle_order
from trash_env.rules import Rules


@partial(jax.jit, static_argnums=(1,))
def _split_bits(key: jax.Array, capacity: int) -> tuple[jax.Array, jax.Array]:
    key, sub = jax.random.split(key)
    return key, shuffle_order(sub, jnp.int32(capacity), capacity)


class KeyChain:
    """Stands in for a reference game's ``numpy.random.Generator``: ``integers`` and
    ``shuffle`` draw exactly as the JAX engine does from the same key, split for split."""

    def __init__(self, key: jax.Array, capacity: int) -> None:
        self.key = key
        self.capacity = capacity

    def integers(self, n: int) -> int:
        self.key, sub = jax.random.split(self.key)
        return int(first_player(sub, n))

    def shuffle(self, items: list[int]) -> None:
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
    """A reference ``Game`` dealt and driven by ``key`` as ``engine.init(key, ...)`` is: its
    first deal is stacked, and ``game.rng`` is a :class:`KeyChain` for the rest."""
    chain = KeyChain(key, card_capacity(rules.total_cards))
    first = chain.integers(rules.num_players)
    order = build_deck(rules.decks, rules.jokers)
    chain.shuffle(order)
    game = Game(rules, seed=0, deals=[order], first_player=first)
    game.rng = chain  # type: ignore[assignment]
    return game
