"""The built-in bots as JAX policies, so that play against them stays on the device:
``random`` (uniform over the legal actions), ``greedy`` and ``counting`` (the rules of
agents/bots/heuristics.py, choice for choice). Each takes a :class:`~trash_env.jax_env.State`
(or, ``*_game``, the engine's :class:`~trash_env.jax_env.engine.Game`) and batches with
``jax.vmap``; they read public information only (face-up cards, the discard pile, the held
card, the hidden-card counts)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import CALL_TRASH, DOWN, DRAW_STOCK, TAKE_DISCARD, WILD_UP
from trash_env.jax_env.engine import CALL, DRAW, SWAP, WILD, Game
from trash_env.jax_env.env import State

BOTS = ("random", "greedy", "counting")


def random_action(key: jax.Array, state: State) -> jax.Array:
    """A uniform choice among the legal actions of the player to act."""
    logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
    return jax.random.categorical(key, logits).astype(jnp.int32)


def _fits(g: Game, player: jax.Array, card: jax.Array) -> jax.Array:
    """``heuristics.fits``: would ``card`` be placed at once in ``player``'s layout?"""
    size = g.sizes[player]
    states = g.state[player]
    open_slot = ((states == DOWN) & (jnp.arange(NUM_SLOTS) < size)).any()
    slot = jnp.clip(card - 1, 0, NUM_SLOTS - 1)
    natural = (card >= 1) & (card <= size) & ((states[slot] == DOWN) | (states[slot] == WILD_UP))
    is_wild = g.wild[jnp.clip(card, 0, NUM_RANKS - 1)]
    return (card >= 0) & jnp.where(is_wild, open_slot, natural)


def natural_supply(g: Game, weight: float | jax.Array) -> jax.Array:
    """``heuristics.natural_supply`` of every rank 1..10 for the player to act, float32
    ``(10,)``: unseen copies plus ``weight`` per copy buried in the discard pile, shared
    with the rivals whose slot for that rank is still open."""
    me = g.current
    ranks = jnp.arange(1, NUM_SLOTS + 1)
    below_top = jnp.arange(g.discard.shape[0]) < g.ndiscard - 1
    buried = ((g.discard[None, :] == ranks[:, None]) & below_top[None, :]).sum(axis=1)
    n = g.layout.shape[0]
    open_slot = (g.state == DOWN) | (g.state == WILD_UP)  # (n, 10)
    in_layout = ranks[None, :] <= g.sizes[:, None]
    rivals = ((jnp.arange(n) != me)[:, None] & in_layout & open_slot).sum(axis=0)
    hidden = g.hidden[ranks].astype(jnp.float32)
    return (hidden + weight * buried.astype(jnp.float32)) / (1 + rivals).astype(jnp.float32)


def _heuristic(g: Game, counting: bool, weight: float | jax.Array) -> jax.Array:
    me = g.current
    top = jnp.where(g.ndiscard > 0, g.discard[jnp.maximum(g.ndiscard - 1, 0)], -1)
    draw = jnp.where(_fits(g, me, top), TAKE_DISCARD, DRAW_STOCK)
    slots = jnp.arange(NUM_SLOTS)
    legal = (g.state[me] == DOWN) & (slots < g.sizes[me])
    highest = jnp.max(jnp.where(legal, slots, -1))
    if counting:
        # The least supply, ties to the highest slot: the last minimum in slot order.
        score = jnp.where(legal, natural_supply(g, weight), jnp.inf)
        wild = NUM_SLOTS - 1 - jnp.argmin(score[::-1])
    else:
        wild = highest
    d = g.decision
    action = jnp.where(
        d == DRAW,
        draw,
        jnp.where(d == SWAP, g.held - 1, jnp.where(d == WILD, wild, CALL_TRASH)),
    )
    return jnp.where(d == CALL, CALL_TRASH, action).astype(jnp.int32)


def greedy_game(g: Game) -> jax.Array:
    """``GreedyAgent``: take a fitting discard, always swap, a wild on the highest slot."""
    return _heuristic(g, False, 0.0)


def counting_game(g: Game, discard_weight: float | jax.Array = 0.5) -> jax.Array:
    """``CountingAgent``: greedy, but a wild on the face-down slot whose natural card is
    least likely to come (ties to the highest slot)."""
    return _heuristic(g, True, discard_weight)


def greedy_action(state: State) -> jax.Array:
    return greedy_game(state._game)


def counting_action(state: State, discard_weight: float | jax.Array = 0.5) -> jax.Array:
    return counting_game(state._game, discard_weight)
