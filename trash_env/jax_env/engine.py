"""The rules of :mod:`trash_env.engine` as pure JAX functions on fixed-shape arrays.

One game is a :class:`Game` (a NamedTuple of arrays, fields named as the reference ``Game``'s
attributes and the batched engine's record); ``jax.vmap`` makes a batch of them. The rules
travel inside the game as arrays (``cfg`` is ``Rules.codes()`` then the number of cards, as in
:mod:`trash_env.vector._kernels`), so one compilation serves every variant with the same
player count and pile capacity.

The reference's methods call each other in tail position; here each returns a
*continuation* code and :func:`run` follows them in a ``lax.while_loop`` (the numba twin does
the same in a Python loop). Under ``jax.vmap`` every game runs every continuation on every pass,
so the continuations are kept light: they change only the game's small fields (the piles are
read, never copied: a card laid on the discard pile is written once per pass, after the
continuation, or once after the first passes: see :func:`_common_pass`), and the rare, heavy
work (a reshuffle of the discard pile, a new round's shuffle and deal) is flagged in
``heavy`` and done between passes by :func:`_heavy`, through
:func:`~trash_env.jax_env.batching.where_needed`, for only the games that flagged it.

Randomness: the game carries a PRNG key. The first player is ``randint(sub, (), 0, n)`` and a
shuffle of ``m`` cards sorts them by ``bits(sub, (capacity,))[:m]`` (stable), each ``sub``
split off the game's key in the order the reference engine draws: the key chain *is* the
game's generator (tests drive the reference with it: tests/test_vector_differential.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from trash_env.cards import NUM_RANKS, NUM_SLOTS, build_deck, rank_totals
from trash_env.codes import (
    CFG_CALL_TRASH,
    CFG_CARDS,
    CFG_EPISODE,
    CFG_FIRST_PLAYER,
    CFG_FREE_DRAWS,
    CFG_LOSERS_REVEAL,
    CFG_MAX_DEALS,
    CFG_MAX_TURNS,
    CFG_RESHUFFLE,
    CFG_START_SIZE,
    CFG_TARGET_SIZE,
    EPISODE_ROUND,
    RESHUFFLE_ALL,
    ROTATE,
)
from trash_env.engine import (
    ABSENT,
    CALL_TRASH,
    DECLINE,
    DOWN,
    DRAW_STOCK,
    NATURAL,
    PHASE_FREE_DRAWS,
    PHASE_PLAY,
    STAY_SILENT,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
)
from trash_env.jax_env import threefry
from trash_env.jax_env.batching import where_needed
from trash_env.rules import Rules

Array = jax.Array

NONE, DRAW, WILD, SWAP, CALL = (int(d) for d in Decision)

# Continuations (the index of each function in ``_CONTINUATIONS``). ANSWER_CALL is the loop's
# answer to a call decision when calls are answered for the player (the env's way).
ANSWER_CALL, BEGIN_TURN, PLAY_HELD, PLAY_HELD_NOSWAP, FINISH_ROUND = 0, 1, 2, 3, 4
DRAW_OR_TAKE, PENALTY, PUT, LAYOUT_COMPLETE, WIN_ROUND, NEXT_TURN, MISS_CALL = 5, 6, 7, 8, 9, 10, 11
STOP = -1
# Passes of the continuations that ``run`` makes for the whole batch before it gathers the
# games still going (a pass plays a whole turn's chain and the next turn's start: most games
# stop in one).
FIRST_PASSES = 1
# Inside a gathered chunk of those games, the heavy work is gathered again, in quarters of the
# chunk (at least 8 games): a new round's shuffle and deal for the games that need it only.
HEAVY_SHARE, HEAVY_LEAST = 4, 8
# The heavy work a game flags for between passes (``Game.heavy``).
NO_WORK, RESHUFFLE_WORK, NEW_ROUND_WORK = 0, 1, 2


# Pile capacities: one compiled program per capacity and player count (as the numba records).
CARD_CAPACITIES = (54, 2 * 54, 12 * 54)
_SORT_LAST = np.uint32(0xFFFFFFFF)
I32 = jnp.int32


def card_capacity(cards: int) -> int:
    """The smallest pile capacity of ``CARD_CAPACITIES`` that holds ``cards``."""
    return next(c for c in CARD_CAPACITIES if c >= cards)


class Game(NamedTuple):
    """One game's state; per-player arrays have the game's ``n`` rows, piles the capacity
    (entries beyond ``nstock``/``ndiscard`` are not cards)."""

    layout: Array  # (n, 10) card per slot, -1 where absent
    state: Array  # (n, 10) DOWN, NATURAL, WILD_UP, ABSENT
    sizes: Array
    rounds_won: Array
    face_down: Array
    pending_claim: Array  # (n,) bool
    completed: Array  # (n,) bool
    shrunk: Array  # (n,) bool: who shrank at the last finished deal
    winners: Array  # (n,) bool
    placings: Array
    face_down_left: Array
    hidden: Array  # (14,)
    stock: Array  # (capacity,), top at stock[nstock - 1]
    discard: Array  # (capacity,), top at discard[ndiscard - 1]
    nstock: Array
    ndiscard: Array
    held: Array
    current: Array
    decision: Array
    phase: Array
    free_left: Array
    called: Array
    pending_slot: Array
    pending_wild: Array
    round_winner: Array
    round_starter: Array
    deal_number: Array
    turns: Array
    done: Array
    truncated: Array
    stock_known: Array
    shuffle_count: Array  # cards staged at the bottom of the stock for the next shuffle
    heavy: Array  # the heavy work flagged for between passes: NO_WORK, RESHUFFLE_WORK, ...
    pushed: Array  # the card this pass lays on the discard pile (at ndiscard - 1), or -1
    put_slot: Array  # where PUT lays the held card
    put_wild: Array  # and whether as a wild
    key: Array
    cfg: Array  # (CFG_LEN,) the rules as integers
    wild: Array  # (14,) bool
    totals: Array  # (14,)
    deck: Array  # (capacity,) the cards in build_deck order, then padding


class RulesArrays(NamedTuple):
    """The rules as the arrays a :class:`Game` carries (numpy, so ``make`` checks happen
    before any trace)."""

    cfg: np.ndarray
    wild: np.ndarray
    totals: np.ndarray
    deck: np.ndarray


def rules_arrays(rules: Rules) -> RulesArrays:
    cards = rules.total_cards
    capacity = card_capacity(cards)
    deck = np.zeros(capacity, np.int32)
    deck[:cards] = build_deck(rules.decks, rules.jokers)
    return RulesArrays(
        cfg=np.array((*rules.codes(), cards), np.int32),
        wild=np.array(rules.wild_table(), np.bool_),
        totals=np.array(rank_totals(rules.decks, rules.jokers), np.int32),
        deck=deck,
    )


# ---------------------------------------------------------------------- randomness


def shuffle_order(sub: Array, m: Array, capacity: int) -> Array:
    """The permutation that shuffles the first ``m`` of ``capacity`` entries (the rest stay
    in place): a stable sort by ``bits(sub, (capacity,))``, padding sorted last."""
    bits = threefry.bits(sub, capacity)
    return stable_order(jnp.where(jnp.arange(capacity) < m, bits, _SORT_LAST), m)


def stable_order(keys: Array, m: Array) -> Array:
    """``argsort(keys, stable=True)`` of uint32 ``keys`` whose entries from ``m`` on are the
    largest key (the padding).

    Sorted as one 32-bit word per entry (the key's high bits, then the entry's index: XLA's
    CPU sort of one operand is several times faster than of a key and its index), which is
    the stable sort's order unless two of the ``m`` keys share their high bits: then (rarely,
    and only for the games where it happens) the key and index are sorted as a pair."""
    capacity = keys.shape[-1]
    index = np.arange(capacity, dtype=np.int32)  # numpy: ``exact`` closes over it
    shift = max(1, (capacity - 1).bit_length())
    low = np.uint32((1 << shift) - 1)
    words = lax.sort((keys & ~low) | index.astype(np.uint32))
    # The first m words are the m keys' (a key's high bits never exceed the padding's).
    high = words >> shift
    tie = ((high[1:] == high[:-1]) & (index[:-1] < m - 1)).any()

    def exact(x: tuple[Array, Array]) -> tuple[Array, Array]:
        keys, _ = x
        _, order = lax.sort((keys, jnp.asarray(index)), num_keys=1, is_stable=True)
        return keys, order

    return where_needed(tie, exact, (keys, (words & low).astype(I32)))[1]


def first_player(sub: Array, n: int) -> Array:
    return jax.random.randint(sub, (), 0, n, dtype=I32)


def _apply_shuffle(g: Game) -> Game:
    """Shuffle the ``shuffle_count`` staged cards at the bottom of the stock, if any."""
    m = g.shuffle_count
    key, sub = threefry.split(g.key)
    order = shuffle_order(sub, m, g.stock.shape[0])
    shuffled = g._replace(stock=g.stock[order], key=key, shuffle_count=jnp.zeros_like(m))
    return lax.cond(m > 0, lambda: shuffled, lambda: g)


# ---------------------------------------------------------------------- helpers


def _hit(shape: tuple[int, ...], index: object) -> Array:
    """bool ``shape``: True at ``index`` (an int or a tuple, one per leading axis, each in
    range). The writes below select with it rather than scatter: under ``jax.vmap`` a
    scatter is a loop of its own on the CPU, a select fuses with the work around it."""
    parts = index if isinstance(index, tuple) else (index,)
    hit = jnp.bool_(True)
    for axis, i in enumerate(parts):
        hit = hit & (lax.broadcasted_iota(I32, shape, axis) == i)
    return hit


def _set(array: Array, index: object, value: object) -> Array:
    """``array.at[index].set(value)`` for an ``index`` in range."""
    return jnp.where(_hit(array.shape, index), jnp.asarray(value, array.dtype), array)


def _add(array: Array, index: object, value: object) -> Array:
    """``array.at[index].add(value)`` for an ``index`` in range."""
    return array + jnp.where(_hit(array.shape, index), jnp.asarray(value, array.dtype), 0)


def _pick(cond: Array, a: Game, b: Game) -> Game:
    """``a`` where ``cond`` else ``b``, field by field."""
    return jax.tree.map(lambda x, y: jnp.where(cond, x, y), a, b)


def _count_ranks(cards: Array, valid: Array) -> Array:
    """Per rank, how many of ``cards`` (where ``valid``) have it."""
    return jnp.zeros(NUM_RANKS + 1, I32).at[jnp.where(valid, cards, NUM_RANKS)].add(1)[:NUM_RANKS]


def _code(k: object) -> Array:
    return jnp.asarray(k, I32)


def _decide(g: Game, decision: int) -> Game:
    return g._replace(decision=_code(decision))


def _push(g: Game, card: Array, has: Array) -> Game:
    """Lay ``card`` (if ``has``) on the discard pile: counted now, written after the pass."""
    return g._replace(pushed=jnp.where(has, card, -1).astype(I32), ndiscard=g.ndiscard + has)


def _write_pushed(g: Game) -> Game:
    index = jnp.maximum(g.ndiscard - 1, 0)
    card = jnp.where(g.pushed >= 0, g.pushed, g.discard[index])
    return g._replace(discard=_set(g.discard, index, card), pushed=_code(-1))


def _discard_held(g: Game) -> Game:
    return _push(g, g.held, g.held >= 0)._replace(held=_code(-1))


def _stage_reshuffle(g: Game) -> Game:
    """``Game._reshuffle`` up to the shuffle: the pile moves into the stock and is staged."""
    nd = g.ndiscard
    keep = (g.cfg[CFG_RESHUFFLE] != RESHUFFLE_ALL) & (nd > 0)
    m = nd - keep
    top = g.discard[jnp.maximum(nd - 1, 0)]
    pile = jnp.arange(g.stock.shape[0]) < m
    moved = g._replace(
        stock=jnp.where(pile, g.discard, g.stock),
        nstock=m,
        hidden=g.hidden + _count_ranks(g.discard, pile),
        discard=jnp.where(keep, _set(g.discard, 0, top), g.discard),
        ndiscard=keep.astype(I32),
        stock_known=jnp.bool_(True),
        shuffle_count=m,
    )
    return _pick(m > 0, moved, g)


def _draw_stock(g: Game) -> Game:
    k = g.nstock - 1
    card = g.stock[k]
    return g._replace(nstock=k, held=card, hidden=_add(g.hidden, card, -1))


def _take_discard(g: Game) -> Game:
    k = g.ndiscard - 1
    return g._replace(held=g.discard[k], ndiscard=k)


def _lay(g: Game, slot: Array, as_wild: Array) -> Game:
    p, card = g.current, g.held
    under = g.layout[p, slot]
    was_down = (g.state[p, slot] == DOWN).astype(I32)
    return g._replace(
        layout=_set(g.layout, (p, slot), card),
        state=_set(g.state, (p, slot), jnp.where(as_wild, WILD_UP, NATURAL)),
        face_down=_add(g.face_down, p, -was_down),
        hidden=_add(g.hidden, under, -was_down),
        held=under,
    )


# ---------------------------------------------------------------------- continuations

Continuation = Callable[[Game], tuple[Game, Array]]

# Each takes the game and returns it with the next continuation. A few run the one that
# usually follows in the same pass (``_play_held`` puts the card, ``_next_turn_and_draw``
# begins the next turn): fewer passes, and under vmap the loop runs as many as the longest.


def _begin_turn(g: Game) -> tuple[Game, Array]:
    g = g._replace(called=jnp.bool_(False))
    claim = g.pending_claim[g.current]
    empty = g.nstock == 0
    g = g._replace(heavy=jnp.where(~claim & empty, RESHUFFLE_WORK, NO_WORK).astype(I32))
    return g, jnp.where(claim, WIN_ROUND, DRAW_OR_TAKE).astype(I32)


def _draw_or_take(g: Game) -> tuple[Game, Array]:
    stock, discard = g.nstock > 0, g.ndiscard > 0
    choose = stock & discard
    drawn = _pick(stock, _draw_stock(g), _take_discard(g))
    g = _pick(choose, _decide(g, DRAW), drawn)
    return g, jnp.where(choose, STOP, PLAY_HELD).astype(I32)


def _held_card(g: Game, may_swap: bool | Array) -> tuple[Array, ...]:
    """What ``Game._play_held``'s loop does with the held card: ask the wild's slot, ask the
    swap, or place it (in the slot it names, a wild in the last face-down one)."""
    p, card = g.current, g.held
    is_wild = g.wild[jnp.maximum(card, 0)]
    playable = (card >= 1) & (card <= g.sizes[p])
    slot = jnp.clip(card - 1, 0, NUM_SLOTS - 1)
    was = g.state[p, slot]
    ask_wild = is_wild & (g.face_down[p] > 1)
    last_down = jnp.argmax(g.state[p] == DOWN).astype(I32)
    swap = ~is_wild & playable & (was == WILD_UP) & may_swap
    place = is_wild | (playable & (was == DOWN))
    return ask_wild, swap, place, jnp.where(is_wild, last_down, slot), is_wild


def _play_held(g: Game, may_swap: bool | Array) -> tuple[Game, Array]:
    """One pass of ``Game._play_held``'s loop: the held card is put (PUT goes on with the card
    it uncovers), or asks a decision, or ends the turn."""
    ask_wild, swap, place, put_slot, put_wild = _held_card(g, may_swap)
    put, k_put = _put(g._replace(put_slot=put_slot, put_wild=put_wild))
    ended = _discard_held(g)
    g = _pick(ask_wild, _decide(g, WILD), _pick(swap, _decide(g, SWAP), _pick(place, put, ended)))
    k = jnp.where(ask_wild | swap, STOP, jnp.where(place, k_put, NEXT_TURN))
    return g, k.astype(I32)


def _put(g: Game) -> tuple[Game, Array]:
    """``Game._put`` of the held card in ``put_slot`` (as a wild if ``put_wild``)."""
    p, slot = g.current, g.put_slot
    down = g.face_down[p]
    completes = (down == 0) | ((down == 1) & (g.state[p, slot] == DOWN))
    ask = completes & (g.cfg[CFG_CALL_TRASH] != 0) & (g.phase == PHASE_PLAY) & ~g.called
    call = _decide(g._replace(pending_slot=slot, pending_wild=g.put_wild), CALL)
    g = _pick(ask, call, _lay(g, slot, g.put_wild))
    k = jnp.where(ask, STOP, jnp.where(completes, LAYOUT_COMPLETE, PLAY_HELD))
    return g, k.astype(I32)


def _layout_complete(g: Game) -> tuple[Game, Array]:
    free = g.phase == PHASE_FREE_DRAWS
    g = _pick(free, g._replace(completed=_set(g.completed, g.current, True)), g)
    return g, jnp.where(free, FINISH_ROUND, WIN_ROUND).astype(I32)


def _win_round(g: Game) -> tuple[Game, Array]:
    """``Game._win_round`` of the player to act (the only player who ever wins one)."""
    n = g.layout.shape[0]
    player = g.current
    g = _discard_held(g._replace(round_winner=player, completed=_set(g.completed, player, True)))
    loser = jnp.clip(1 - player, 0, n - 1)
    has_free = g.cfg[CFG_FREE_DRAWS] > 0
    loser_complete = has_free & (g.face_down[loser] == 0)
    free = has_free & ~loser_complete
    g = _pick(loser_complete, g._replace(completed=_set(g.completed, loser, True)), g)
    g = _pick(
        free,
        g._replace(phase=_code(PHASE_FREE_DRAWS), free_left=g.cfg[CFG_FREE_DRAWS], current=loser),
        g,
    )
    return g, jnp.where(free, BEGIN_TURN, FINISH_ROUND).astype(I32)


def _next_turn(g: Game) -> tuple[Game, Array]:
    n = g.layout.shape[0]
    g = g._replace(turns=g.turns + 1)
    truncate = g.turns >= g.cfg[CFG_MAX_TURNS]
    free = ~truncate & (g.phase == PHASE_FREE_DRAWS)
    play = ~truncate & ~free
    left = g.free_left - free
    g = g._replace(
        done=g.done | truncate,
        truncated=g.truncated | truncate,
        decision=jnp.where(truncate, NONE, g.decision).astype(I32),
        free_left=left,
        current=jnp.where(play, (g.current + 1) % n, g.current).astype(I32),
    )
    k = jnp.where(truncate, STOP, jnp.where(free & (left == 0), FINISH_ROUND, BEGIN_TURN))
    return g, k.astype(I32)


def _miss_call(g: Game) -> tuple[Game, Array]:
    g = _discard_held(g)
    g = g._replace(heavy=jnp.where(g.nstock == 0, RESHUFFLE_WORK, NO_WORK).astype(I32))
    return g, _code(PENALTY)


def _penalty(g: Game) -> tuple[Game, Array]:
    """``Game._miss_call`` after the reshuffle: the penalty card and the claim."""
    k = g.nstock - 1
    card = g.stock[jnp.maximum(k, 0)]
    drawn = _push(g._replace(nstock=k, hidden=_add(g.hidden, card, -1)), card, jnp.bool_(True))
    g = _pick(g.nstock > 0, drawn, g)
    return g._replace(pending_claim=_set(g.pending_claim, g.current, True)), _code(NEXT_TURN)


def _game_over(g: Game, winners: Array) -> Game:
    """Winners place first; the others by how few face-down slots they had left."""
    left = g.face_down_left
    below = (~winners[None, :] & (left[None, :] < left[:, None])).sum(axis=1)
    placings = jnp.where(winners, 1, 1 + winners.sum() + below).astype(I32)
    return g._replace(
        done=jnp.bool_(True), decision=_code(NONE), winners=winners, placings=placings
    )


def _finish_round(g: Game) -> tuple[Game, Array]:
    n = g.layout.shape[0]
    g = _discard_held(g)
    slots = jnp.arange(NUM_SLOTS)
    down = g.state == DOWN
    correct = ~down | (g.layout == slots[None, :] + 1) | g.wild[jnp.maximum(g.layout, 0)]
    revealed = (g.cfg[CFG_LOSERS_REVEAL] != 0) & ~g.completed & correct.all(axis=1)
    shrunk = g.completed | revealed
    sizes = g.sizes - shrunk
    g = g._replace(
        shrunk=shrunk,
        face_down_left=g.face_down,
        sizes=sizes,
        rounds_won=g.rounds_won + shrunk,
        deal_number=g.deal_number + 1,
    )
    reached = shrunk & (sizes <= g.cfg[CFG_TARGET_SIZE])
    by_deals = (g.cfg[CFG_MAX_DEALS] > 0) & (g.deal_number >= g.cfg[CFG_MAX_DEALS])
    one_round = g.cfg[CFG_EPISODE] == EPISODE_ROUND
    over = reached.any() | one_round | by_deals
    smallest = sizes == sizes.min()
    winners = jnp.where(reached.any(), reached, jnp.where(one_round, shrunk, smallest))
    starter = jnp.where(
        g.cfg[CFG_FIRST_PLAYER] == ROTATE, (g.round_starter + 1) % n, g.round_winner
    )
    next_round = g._replace(current=starter.astype(I32), heavy=_code(NEW_ROUND_WORK))
    g = _pick(over, _game_over(g, winners), next_round)
    return g, jnp.where(over, STOP, BEGIN_TURN).astype(I32)


def _deal(g: Game) -> Game:
    """``Game._start_round`` after the shuffle: ``stock[:cards]`` holds the dealt order."""
    n = g.layout.shape[0]
    capacity = g.stock.shape[0]
    cards = g.cfg[CFG_CARDS]
    order = g.stock
    sizes = g.sizes
    offsets = jnp.cumsum(sizes) - sizes
    slots = jnp.arange(NUM_SLOTS)
    inside = slots[None, :] < sizes[:, None]
    position = jnp.clip(offsets[:, None] + slots[None, :], 0, capacity - 1)
    left = cards - sizes.sum()
    k = jnp.arange(capacity)
    stock = jnp.where(k < left, order[jnp.clip(cards - 1 - k, 0, capacity - 1)], 0)
    g = g._replace(
        layout=jnp.where(inside, order[position], -1).astype(I32),
        state=jnp.where(inside, DOWN, ABSENT).astype(I32),
        face_down=sizes,
        pending_claim=jnp.zeros(n, jnp.bool_),
        completed=jnp.zeros(n, jnp.bool_),
        stock=stock.astype(I32),
        nstock=left,
        discard=jnp.zeros_like(g.discard),
        ndiscard=_code(0),
        held=_code(-1),
        hidden=g.totals,
        stock_known=jnp.bool_(False),
        phase=_code(PHASE_PLAY),
        free_left=_code(0),
        called=jnp.bool_(False),
        pending_slot=_code(-1),
        pending_wild=jnp.bool_(False),
        round_winner=_code(-1),
        round_starter=g.current,
    )
    return g


def _apply(g: Game, action: Array) -> tuple[Game, Array]:
    """A legal action applied: the game and the continuation to run."""
    d = g.decision
    drawn = _pick(action == DRAW_STOCK, _draw_stock(g), _take_discard(g))
    put = g._replace(put_slot=action, put_wild=d == WILD)
    laid = _lay(g, g.pending_slot, g.pending_wild)
    called = laid._replace(called=jnp.bool_(True))
    is_draw, is_call = d == DRAW, d == CALL
    declined = (d == SWAP) & (action == DECLINE)
    g = _pick(
        is_draw,
        drawn,
        _pick(is_call, _pick(action == CALL_TRASH, called, laid), _pick(declined, g, put)),
    )
    k = jnp.where(
        is_draw,
        PLAY_HELD,
        jnp.where(
            is_call,
            jnp.where(action == CALL_TRASH, LAYOUT_COMPLETE, MISS_CALL),
            jnp.where(declined, PLAY_HELD_NOSWAP, PUT),
        ),
    )
    return g._replace(decision=_code(NONE)), k.astype(I32)


def _answer_call(g: Game) -> tuple[Game, Array]:
    """The call decision answered with ``CALL_TRASH`` (the env's rule)."""
    return _apply(g, _code(CALL_TRASH))


def _next_turn_and_draw(g: Game) -> tuple[Game, Array]:
    """``_next_turn``, then ``_begin_turn`` and ``_draw_or_take`` in the same pass where the
    game goes on to them (the common end of a turn: one pass, not three)."""
    g1, k1 = _next_turn(g)
    g2, k2 = _begin_turn(g1)
    g3, k3 = _draw_or_take(g2)
    on2 = k1 == BEGIN_TURN
    on3 = on2 & (k2 == DRAW_OR_TAKE) & (g2.heavy == NO_WORK)
    g = _pick(on3, g3, _pick(on2, g2, g1))
    return g, jnp.where(on3, k3, jnp.where(on2, k2, k1)).astype(I32)


def _then(g: Game, k: Array, code: int, continuation: Continuation) -> tuple[Game, Array]:
    """``continuation`` where the game goes on to ``code``, else the game as it is; a card
    discarded earlier in the same pass stays in ``pushed`` (at most one is discarded)."""
    on = k == code
    out, k_out = continuation(g)
    out = out._replace(pushed=jnp.where(out.pushed >= 0, out.pushed, g.pushed))
    return _pick(on, out, g), jnp.where(on, k_out, k).astype(I32)


def _round_end(g: Game, k: Array) -> tuple[Game, Array]:
    """From LAYOUT_COMPLETE, WIN_ROUND or FINISH_ROUND, the ones that follow in the same pass
    (each computed once: the end of a round is one pass, not three)."""
    g, k = _then(g, k, LAYOUT_COMPLETE, _layout_complete)
    g, k = _then(g, k, WIN_ROUND, _win_round)
    return _then(g, k, FINISH_ROUND, _finish_round)


_CONTINUATIONS: tuple[Callable[[Game, Array], tuple[Game, Array]], ...] = (
    lambda g, k: _answer_call(g),
    lambda g, k: _begin_turn(g),
    lambda g, k: _play_held(g, True),
    lambda g, k: _play_held(g, False),
    _round_end,
    lambda g, k: _draw_or_take(g),
    lambda g, k: _penalty(g),
    lambda g, k: _put(g),
    lambda g, k: _miss_call(g),
    lambda g, k: _next_turn_and_draw(g),
)
# The branch of ``_CONTINUATIONS`` that runs each continuation code.
_BRANCH = np.array(
    [0, 1, 2, 3, 4, 5, 6, 7, 4, 4, 9, 8],  # by code: ANSWER_CALL ... MISS_CALL
    np.int32,
)

# What the continuations change: everything but the piles, the key and the rules (so that the
# selection among them under vmap moves a few dozen numbers per game, not the piles).
_RULES = ("cfg", "wild", "totals", "deck")
_FIXED = ("stock", "discard", "key", *_RULES, "shuffle_count")
_LIGHT = tuple(f for f in Game._fields if f not in _FIXED)
# Everything but the piles and the rules.
_SMALL = tuple(f for f in Game._fields if f not in ("stock", "discard", *_RULES))


def _light(
    continuation: Callable[[Game, Array], tuple[Game, Array]],
) -> Callable[[Game, Array], tuple[tuple, Array]]:
    def run_light(g: Game, k: Array) -> tuple[tuple, Array]:
        out, k = continuation(g, k)
        return tuple(getattr(out, f) for f in _LIGHT), k

    return run_light


_LIGHT_CONTINUATIONS = tuple(_light(c) for c in _CONTINUATIONS)


def _pass(carry: tuple[Game, Array]) -> tuple[Game, Array]:
    """One continuation of the game (its light fields), then the card it discarded, if any."""
    g, k = carry
    branch = jnp.asarray(_BRANCH)[jnp.maximum(k, ANSWER_CALL)]
    light, k = lax.switch(branch, _LIGHT_CONTINUATIONS, g, k)
    return _write_pushed(g._replace(**dict(zip(_LIGHT, light, strict=True)))), k


# The continuations of almost every pass: the held card played, put, the turn's end.
_COMMON = (PLAY_HELD, PLAY_HELD_NOSWAP, PUT, NEXT_TURN)
# The most natural cards ``_lay_naturals`` lays in one pass: every such chain, since each lay
# leaves a face-down slot (the one that completes the layout is ``_put``'s) and a layout has at
# most ``NUM_SLOTS``.
CHAIN_LAYS = NUM_SLOTS - 1


def _lay_naturals(g: Game, active: Array) -> tuple[Game, Array]:
    """``Game._play_held``'s loop, where ``active``, for as long as the held card is a natural
    card for a face-down slot that does not complete the layout: it is laid face up and the
    card it uncovers is held (at most ``CHAIN_LAYS`` cards). Such a chain visits each slot
    at most once, so it is followed on the player's row as it was, packed in numbers (the
    open slots and the visited ones as bits, the row's cards as 4-bit fields of two words:
    each link is a few operations on numbers, not on rows), in a loop (its carries are kept:
    unrolled, XLA fused the whole chain into each of its consumers, once per element); the
    row, the face-down count and the hidden counts are written once, after it. Returns the
    game and whether a card was laid."""
    p = g.current
    row = g.layout[p]
    slots = jnp.arange(NUM_SLOTS)
    fits = (g.state[p] == DOWN) & (slots < g.sizes[p]) & ~g.wild[slots + 1]
    open_bits = jnp.where(fits, 1 << slots, 0).sum(dtype=I32)
    nibbles = (row & 15).astype(jnp.uint32) << (4 * (slots % 8)).astype(jnp.uint32)
    low = jnp.where(slots < 8, nibbles, 0).sum(dtype=jnp.uint32)
    high = jnp.where(slots >= 8, nibbles, 0).sum(dtype=jnp.uint32)
    face_down = g.face_down[p]

    def link(laid: int | Array, chain: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        card, going, visited = chain
        slot = jnp.clip(card - 1, 0, NUM_SLOTS - 1)
        bit = jnp.where((card >= 1) & (card <= NUM_SLOTS), 1 << slot, 0)
        going = going & ((open_bits & ~visited & bit) != 0) & (face_down - laid >= 2)
        visited = visited | jnp.where(going, bit, 0)
        word = jnp.where(slot < 8, low, high) >> (4 * (slot % 8)).astype(jnp.uint32)
        return jnp.where(going, (word & 15).astype(I32), card), going, visited

    chain = lax.fori_loop(0, CHAIN_LAYS, link, (g.held, active, jnp.zeros((), I32)))
    card, _, visited = chain
    here = ((visited >> slots) & 1) == 1
    count = here.sum(dtype=I32)
    ranks = jnp.arange(NUM_RANKS)
    uncovered = (here[:, None] & (row[:, None] == ranks[None, :])).sum(axis=0, dtype=I32)
    here = _hit(g.layout.shape, p) & here[None, :]
    g = g._replace(
        layout=jnp.where(here, slots[None, :] + 1, g.layout).astype(I32),
        state=jnp.where(here, NATURAL, g.state).astype(I32),
        face_down=_add(g.face_down, p, -count),
        hidden=g.hidden - uncovered,
        held=card,
    )
    return g, count > 0


def _common_pass(carry: tuple[Game, Array]) -> tuple[Game, Array]:
    """``_pass`` for a game whose continuation is one of ``_COMMON`` (under vmap only these
    run, not every continuation), each where the game goes on to it: PUT, then the held
    card's chain of natural cards laid (``_lay_naturals``) and what is done with the card
    it ends on, then the next turn's start. The card it discards stays in ``pushed``
    (``run`` writes it after these passes): a turn's end discards once, and the next
    turn's start never reads the pile."""
    g, k = carry
    g, k = _then(g, k, PUT, _put)
    is_held = (k == PLAY_HELD) | (k == PLAY_HELD_NOSWAP)
    g, laid = _lay_naturals(g, is_held)
    ask_wild, swap, place, put_slot, put_wild = _held_card(g, laid | (k != PLAY_HELD_NOSWAP))
    put, k_put = _put(g._replace(put_slot=put_slot, put_wild=put_wild))
    asked = _pick(ask_wild, _decide(g, WILD), _decide(g, SWAP))
    held = _pick(ask_wild | swap, asked, _pick(place, put, _discard_held(g)))
    g = _pick(is_held, held, g)
    k_held = jnp.where(ask_wild | swap, STOP, jnp.where(place, k_put, NEXT_TURN))
    k = jnp.where(is_held, k_held, k)
    turn, k_turn = _next_turn_and_draw(g)
    is_turn = k == NEXT_TURN
    return _pick(is_turn, turn, g), jnp.where(is_turn, k_turn, k).astype(I32)


def _heavy(g: Game) -> Game:
    """The work a continuation flagged: the reshuffle of the discard pile into the stock, or a
    new round (the decks shuffled and dealt); each shuffle is a sort."""
    g = _pick(g.heavy == RESHUFFLE_WORK, _stage_reshuffle(g), g)
    new_round = g.heavy == NEW_ROUND_WORK
    g = _pick(new_round, g._replace(stock=g.deck, shuffle_count=g.cfg[CFG_CARDS]), g)
    g = _apply_shuffle(g)
    g = _pick(new_round, _deal(g), g)
    return g._replace(heavy=_code(NO_WORK))


def _start_turn(g: Game, k: Array) -> tuple[Game, Array]:
    """BEGIN_TURN and DRAW_OR_TAKE where the game goes on to them and has no heavy work
    flagged (after a new deal: the first turn's start and its draw, in the same pass)."""
    g, k = _then(g, k, BEGIN_TURN, _begin_turn)
    on = (k == DRAW_OR_TAKE) & (g.heavy == NO_WORK)
    drawn, k_drawn = _draw_or_take(g)
    return _pick(on, drawn, g), jnp.where(on, k_drawn, k).astype(I32)


def _heavy_then_start(carry: tuple[Game, Array]) -> tuple[Game, Array]:
    """``_heavy``, then the turn it held up (``_start_turn``)."""
    g, k = carry
    return _start_turn(_heavy(g), k)


def _is_common(g: Game, k: Array) -> Array:
    """Whether ``_common_pass`` runs the game's next continuation."""
    common = (k == PLAY_HELD) | (k == PLAY_HELD_NOSWAP) | (k == PUT) | (k == NEXT_TURN)
    return common & (g.heavy == NO_WORK)


def run(g: Game, k: Array, answer_calls: bool = False) -> Game:
    """Follow continuations until the game stops at a decision (a call decision too unless
    ``answer_calls``) or ends. Under vmap a loop runs as many passes as the batch's longest
    chain, each pass every continuation, while most games need one to three passes of the
    ``_COMMON`` ones: the first ``FIRST_PASSES`` passes run those for the whole batch, the rest
    for the games still going only (``where_needed``), in rounds of: the heavy work (and the
    turn it held up) where flagged, common passes while any game has one to make, and one pass
    of every continuation for the games whose next one is not common."""

    def going(g: Game, k: Array) -> Array:
        more = k != STOP
        if answer_calls:
            more = more | ((g.decision == CALL) & ~g.done)
        return more

    def common_passes(carry: tuple[Game, Array], limit: int | None) -> tuple[Game, Array]:
        def more(c: tuple[Game, Array, Array]) -> Array:
            g, k, n = c
            more = going(g, k) & _is_common(g, k)
            return more if limit is None else more & (n < limit)

        def one(c: tuple[Game, Array, Array]) -> tuple[Game, Array, Array]:
            return (*_common_pass((c[0], c[1])), c[2] + 1)

        g, k, _ = lax.while_loop(more, one, (*carry, _code(0)))
        return _write_pushed(g), k

    def round_of_rest(carry: tuple[Game, Array]) -> tuple[Game, Array]:
        g, k = carry
        ends = (k == LAYOUT_COMPLETE) | (k == WIN_ROUND) | (k == FINISH_ROUND)
        ended, k_ended = _round_end(g, k)
        g = _write_pushed(_pick(ends, ended, g))
        k = jnp.where(ends, k_ended, k).astype(I32)
        heavy = g.heavy != NO_WORK
        g, k = where_needed(heavy, _heavy_then_start, (g, k), HEAVY_SHARE, HEAVY_LEAST)
        g, k = common_passes((g, k), None)
        other = going(g, k) & ~_is_common(g, k) & (g.heavy == NO_WORK)
        return where_needed(other, _pass, (g, k), HEAVY_SHARE, HEAVY_LEAST)

    def rest(carry: tuple[Game, Array]) -> tuple[Game, Array]:
        return lax.while_loop(lambda c: going(*c), round_of_rest, carry)

    rules = {f: getattr(g, f) for f in _RULES}
    g, k = common_passes((g, _code(k)), FIRST_PASSES)
    g, _ = where_needed(going(g, k), rest, (g, k))
    return g._replace(**rules)  # unchanged, and so known to be: selections of them cost nothing


# ---------------------------------------------------------------------- public functions


def new_game(key: Array, arrays: RulesArrays, num_players: int) -> Game:
    """``Game(rules)`` from ``key``: the first player, then the first deal."""
    n = num_players
    key, sub = threefry.split(key)
    capacity = arrays.deck.shape[0]
    zeros_n = jnp.zeros(n, I32)
    false_n = jnp.zeros(n, jnp.bool_)
    scalar = jnp.asarray(0, I32)
    g = Game(
        layout=jnp.full((n, NUM_SLOTS), -1, I32),
        state=jnp.full((n, NUM_SLOTS), ABSENT, I32),
        sizes=jnp.full(n, arrays.cfg[CFG_START_SIZE], I32),
        rounds_won=zeros_n,
        face_down=zeros_n,
        pending_claim=false_n,
        completed=false_n,
        shrunk=false_n,
        winners=false_n,
        placings=zeros_n,
        face_down_left=zeros_n,
        hidden=jnp.asarray(arrays.totals, I32),
        stock=jnp.zeros(capacity, I32),
        discard=jnp.zeros(capacity, I32),
        nstock=scalar,
        ndiscard=scalar,
        held=jnp.asarray(-1, I32),
        current=first_player(sub, n),
        decision=jnp.asarray(NONE, I32),
        phase=scalar,
        free_left=scalar,
        called=jnp.bool_(False),
        pending_slot=jnp.asarray(-1, I32),
        pending_wild=jnp.bool_(False),
        round_winner=jnp.asarray(-1, I32),
        round_starter=scalar,
        deal_number=scalar,
        turns=scalar,
        done=jnp.bool_(False),
        truncated=jnp.bool_(False),
        stock_known=jnp.bool_(False),
        shuffle_count=scalar,
        heavy=jnp.asarray(NEW_ROUND_WORK, I32),
        pushed=jnp.asarray(-1, I32),
        put_slot=scalar,
        put_wild=jnp.bool_(False),
        key=key,
        cfg=jnp.asarray(arrays.cfg, I32),
        wild=jnp.asarray(arrays.wild, jnp.bool_),
        totals=jnp.asarray(arrays.totals, I32),
        deck=jnp.asarray(arrays.deck, I32),
    )
    return g


def init(key: Array, arrays: RulesArrays, num_players: int, answer_calls: bool = False) -> Game:
    """A new game dealt and played to its first decision. Every new game needs the deal and
    the first turn's start, so they run here for each game (not gathered by ``run``): only
    the games whose first draw goes on past the common continuations reach ``run``'s rest."""
    g, k = _heavy_then_start((new_game(key, arrays, num_players), _code(BEGIN_TURN)))
    return run(g, k, answer_calls)


def is_legal(g: Game, action: Array) -> Array:
    """Whether engine action ``action`` (0..14) is one of ``Game.legal_actions()``."""
    p = g.current
    d = g.decision
    slot = jnp.clip(action, 0, NUM_SLOTS - 1)
    wild_ok = (action >= 0) & (action < g.sizes[p]) & (g.state[p, slot] == DOWN)
    return (
        ((d == DRAW) & ((action == DRAW_STOCK) | (action == TAKE_DISCARD)))
        | ((d == WILD) & wild_ok)
        | ((d == SWAP) & ((action == g.held - 1) | (action == DECLINE)))
        | ((d == CALL) & ((action == CALL_TRASH) | (action == STAY_SILENT)))
    ) & ~g.done


def step(g: Game, action: Array, answer_calls: bool = False) -> tuple[Game, Array]:
    """``Game.step``: a legal engine action applied and played on to the next decision; an
    illegal one (or a finished game) changes nothing. Returns the game and whether the action
    was legal."""
    action = jnp.asarray(action, I32)
    legal = is_legal(g, action)

    moved, k = _apply(g, action)
    out = run(moved, jnp.where(legal, k, STOP), answer_calls)
    # An illegal action runs nothing, so the piles are ``g``'s: only the small fields differ.
    small = {f: jnp.where(legal, getattr(out, f), getattr(g, f)) for f in _SMALL}
    return out._replace(**small), legal


def returns(g: Game) -> Array:
    """``Game.returns()`` as float32, the reference's values cast (a table: XLA would turn
    a division by a constant into a product, which rounds differently): zero-sum shares of
    the winners, zero while the game runs or when it was truncated."""
    n = g.layout.shape[0]
    winner = np.array([0.0] + [(n / k - 1.0) / (n - 1) for k in range(1, n + 1)], np.float32)
    loser = np.float32((0.0 - 1.0) / (n - 1))
    k = g.winners.sum()
    out = jnp.where(g.winners, jnp.asarray(winner)[k], loser)
    return jnp.where(g.done & ~g.truncated & (k > 0), out, 0.0).astype(jnp.float32)
