"""What a seat sees of a JAX :class:`~trash_env.jax_env.rules.Game`: the observation vector
(:func:`trash_env.observation.encode_observation`, value for value, float32), its ``pairs``
form (:mod:`trash_env.pairs`, the same index tables) and the env's action mask
(:func:`trash_env.observation.action_mask`). Public information only: face-down cards and the
stock's order are never read here."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.codes import CFG_CARDS
from trash_env.engine import DECLINE, DOWN, DRAW_STOCK, NUM_ACTIONS, NUM_DECISIONS, TAKE_DISCARD
from trash_env.jax_env.rules import DRAW, SWAP, WILD, Game
from trash_env.observation import SLOT_FEATURES
from trash_env.pairs import pair_indices

F32 = jnp.float32
NO_CARD = NUM_RANKS  # the one-hot position of "no card"
# count / 10 as the reference rounds it: XLA turns a division by a constant into a product
# with its reciprocal, which rounds differently for some counts.
_TENTHS = np.array([k / NUM_SLOTS for k in range(NUM_SLOTS + 1)], np.float32)


def _tenths(count: jax.Array) -> jax.Array:
    return jnp.asarray(_TENTHS)[jnp.clip(count, 0, NUM_SLOTS)]


def _one_hot(index: jax.Array, width: int) -> jax.Array:
    return (index[..., None] == jnp.arange(width)).astype(F32)


def observation(g: Game, observer: jax.Array) -> jax.Array:
    """``encode_observation(game, observer)``: float32 ``(observation_size(n),)``."""
    n = g.layout.shape[0]
    seats = (observer + jnp.arange(n)) % n
    acting = jnp.where(g.done, -1, g.current)
    slots = _one_hot(g.state[seats], SLOT_FEATURES).reshape(n, NUM_SLOTS * SLOT_FEATURES)
    tail = jnp.stack(
        [
            _tenths(g.sizes[seats]),
            _tenths(g.rounds_won[seats]),
            _tenths(g.face_down[seats]),
            (seats == acting).astype(F32),
        ],
        axis=1,
    )
    top = jnp.where(g.ndiscard > 0, g.discard[jnp.maximum(g.ndiscard - 1, 0)], NO_CARD)
    held = jnp.where(g.held >= 0, g.held, NO_CARD)
    # The divisors are the rules': constants where the rules are baked in (``env.init``),
    # and XLA turns a division by a constant into a product with its reciprocal, which rounds
    # differently from the reference's division in some last bits. Behind a barrier they are
    # divisors in every program.
    totals, cards = lax.optimization_barrier((g.totals.astype(F32), g.cfg[CFG_CARDS].astype(F32)))
    visible = jnp.where(g.totals > 0, (totals - g.hidden) / jnp.maximum(totals, 1.0), 0.0)
    return jnp.concatenate(
        [
            jnp.concatenate([slots, tail], axis=1).reshape(-1),
            _one_hot(top, NUM_RANKS + 1),
            _one_hot(held, NUM_RANKS + 1),
            visible.astype(F32),
            g.wild.astype(F32),
            _one_hot(g.decision, NUM_DECISIONS),
            jnp.stack([g.nstock.astype(F32) / cards, g.ndiscard.astype(F32) / cards]),
        ]
    )


def with_pairs(plain: jax.Array, num_players: int) -> jax.Array:
    """``trash_env.pairs.add_pairs``: the plain observation with its 108 products appended."""
    left, right = pair_indices(num_players)
    return jnp.concatenate([plain, plain[..., left] * plain[..., right]], axis=-1)


def action_mask(g: Game, player: jax.Array) -> jax.Array:
    """bool ``(13,)``: the env actions open to ``player`` (none if it is not to act, and none
    at a call decision: the env answers calls)."""
    p = g.current
    actions = jnp.arange(NUM_ACTIONS)
    on_turn = ~g.done & (p == player)
    slots = jnp.arange(NUM_SLOTS)
    open_slots = (g.state[p] == DOWN) & (slots < g.sizes[p])
    wild = jnp.concatenate([open_slots, jnp.zeros(NUM_ACTIONS - NUM_SLOTS, jnp.bool_)])
    draw = (actions == DRAW_STOCK) | (actions == TAKE_DISCARD)
    swap = (actions == g.held - 1) | (actions == DECLINE)
    mask = jnp.where(
        g.decision == DRAW,
        draw,
        jnp.where(g.decision == WILD, wild, jnp.where(g.decision == SWAP, swap, False)),
    )
    return mask & on_turn
