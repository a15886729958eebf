"""The rules of :mod:`trash_env.engine` as pure JAX functions of one game, method by method.

This is the JAX engine's rule book. Each function below is the reference ``Game`` method of
the same name (``begin_turn`` is ``Game._begin_turn``, ``put`` is ``Game._put``, ...) with the
same immediate effects: a discarded card is laid on the pile, a reshuffle shuffles, a new
round is shuffled and dealt, where the reference does so. The reference's methods call each
other in tail position; here each returns the game and the code of the method that follows
(its *continuation*), and :func:`run` follows them in a ``lax.while_loop``, one method a pass.
:func:`init` and :func:`step` are ``Game(rules)`` and ``Game.step`` of one game, correct on
their own (tests/test_vector_differential.py plays them against the reference).

:mod:`trash_env.jax_env.engine` runs these same rules scheduled for a batch under
``jax.vmap`` (which games run which pass; the rare, heavy work gathered) and changes no
outcome. A rule changes here, and there only where the scheduler restates it (its module
docstring lists where).

One game is a :class:`Game` (a NamedTuple of arrays, fields named as the reference ``Game``'s
attributes and the numba engine's record); ``jax.vmap`` makes a batch of them. The rules
travel inside the game as arrays (``cfg``, ``wild``, ``totals``, ``deck``:
:mod:`trash_env.rules_arrays`), so one compilation serves every variant with the same player
count and pile capacity.

Randomness: the game carries a PRNG key. The first player is ``randint(sub, (), 0, n)`` and a
shuffle of ``m`` cards sorts them by ``bits(sub, (capacity,))[:m]`` (stable), each ``sub``
split off the game's key in the order the reference engine draws: the key chain *is* the
game's generator (:mod:`trash_env.jax_env.reference` drives the reference with it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from trash_env.cards import NUM_RANKS, NUM_SLOTS
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
from trash_env.rules_arrays import RulesArrays

Array = jax.Array
I32 = jnp.int32

NONE, DRAW, WILD, SWAP, CALL = (int(d) for d in Decision)

# Continuations: the method that runs next (the index of its function in ``_METHODS``).
# ANSWER_CALL is the answer to a call decision when calls are answered for the player (the
# env's way: ``run(..., answer_calls=True)``).
ANSWER_CALL, START_ROUND, BEGIN_TURN, PLAY_HELD, PLAY_HELD_NOSWAP = 0, 1, 2, 3, 4
LAYOUT_COMPLETE, MISS_CALL, NEXT_TURN, WIN_ROUND, FINISH_ROUND = 5, 6, 7, 8, 9
STOP = -1


class Game(NamedTuple):
    """One game's state; per-player arrays have the game's ``n`` rows, piles the capacity
    (entries beyond ``nstock``/``ndiscard`` are not cards). The last fields before the key
    are the batch scheduler's (:mod:`trash_env.jax_env.engine`): these rules never read them,
    and between two steps they hold their defaults."""

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
    shuffle_count: Array  # the scheduler's: cards staged at the stock's bottom for a shuffle
    heavy: Array  # the scheduler's: the heavy work flagged for between passes
    pushed: Array  # the scheduler's: the card laid on the discard pile this pass, or -1
    put_slot: Array  # the scheduler's: where its PUT lays the held card
    put_wild: Array  # and whether as a wild
    key: Array
    cfg: Array  # (CFG_LEN,) the rules as integers
    wild: Array  # (14,) bool
    totals: Array  # (14,)
    deck: Array  # (capacity,) the cards in build_deck order, then padding


# ---------------------------------------------------------------------- randomness


def shuffle_order(sub: Array, m: Array, capacity: int) -> Array:
    """The permutation that shuffles the first ``m`` of ``capacity`` entries (the rest stay
    in place): each entry gets a random word, ``bits(sub, (capacity,))``; the first ``m``
    are sorted by their word's high bits (all but the few that number the entries), ties in
    index order, and the rest sort last.

    The order is that of one sort of one 32-bit word per entry, the high bits then the
    index (XLA's CPU sort of one operand is several times faster than of a key and its
    index)."""
    index = np.arange(capacity, dtype=np.uint32)
    shift = max(1, (capacity - 1).bit_length())
    high = ~np.uint32((1 << shift) - 1)
    bits = jnp.where(jnp.arange(capacity) < m, threefry.bits(sub, capacity) & high, high)
    return (lax.sort(bits | index) & ~high).astype(I32)


def first_player(sub: Array, n: int) -> Array:
    return threefry.randint(sub, n)


def shuffle_stock(g: Game, m: Array) -> Game:
    """The first ``m`` cards of the stock shuffled by the next split of the game's key (none
    drawn when ``m`` is 0, as the reference shuffles no empty pile)."""
    key, sub = threefry.split(g.key)
    order = shuffle_order(sub, m, g.stock.shape[0])
    return _pick(m > 0, g._replace(stock=g.stock[order], key=key), g)


# ---------------------------------------------------------------------- array helpers


def _hit(shape: tuple[int, ...], index: object) -> Array:
    """bool ``shape``: True at ``index`` (an int or a tuple, one per leading axis, each in
    range). Writes select with it rather than scatter: under ``jax.vmap`` a scatter is a
    loop of its own on the CPU, a select fuses with the work around it."""
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
    """``a`` where ``cond`` else ``b``, field by field (a field both hold as the same array
    is that array: nothing to select, and the batch scheduler sees it unchanged)."""
    return jax.tree.map(lambda x, y: x if x is y else _where(cond, x, y), a, b)


def _where(cond: Array, x: Array, y: Array) -> Array:
    """``jnp.where(cond, x, y)``; for a scalar ``cond`` and two arrays of one shape and type
    (every field of two games), ``lax.select`` itself: ``jnp.where`` is a jitted function,
    which costs each of the step's hundreds of selections a nested trace."""
    x, y, cond = jnp.asarray(x), jnp.asarray(y), jnp.asarray(cond)
    if cond.shape or x.shape != y.shape or x.dtype != y.dtype or cond.dtype != jnp.bool_:
        return jnp.where(cond, x, y)
    return lax.select(lax.broadcast(cond, x.shape), x, y)


def _count_ranks(cards: Array, valid: Array) -> Array:
    """Per rank, how many of ``cards`` (where ``valid``) have it."""
    return jnp.zeros(NUM_RANKS + 1, I32).at[jnp.where(valid, cards, NUM_RANKS)].add(1)[:NUM_RANKS]


def _code(k: object) -> Array:
    return jnp.asarray(k, I32)


def _decide(g: Game, decision: int) -> Game:
    return g._replace(decision=_code(decision))


Step = tuple[Game, Array]  # a game and its continuation


# ---------------------------------------------------------------------- the round


def start_round(g: Game) -> Step:
    """``Game._start_round`` of the starter in ``current``: the decks shuffled and dealt."""
    g = shuffle_stock(g._replace(stock=g.deck), g.cfg[CFG_CARDS])
    return deal(g), _code(BEGIN_TURN)


def deal(g: Game) -> Game:
    """``Game._start_round`` after the shuffle: ``stock[:cards]`` holds the dealt order, each
    layout its share from the top, the stock the rest (its top at the end)."""
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
    return g._replace(
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


def begin_turn(g: Game) -> Step:
    """``Game._begin_turn``: a missed call's claim wins the round; else the stock (reshuffled
    if empty) or the discard pile, the player's choice when both have cards."""
    g = g._replace(called=jnp.bool_(False))
    claim = g.pending_claim[g.current]
    g = _pick(~claim & (g.nstock == 0), reshuffle(g), g)
    stock, discard = g.nstock > 0, g.ndiscard > 0
    choose = stock & discard
    drawn, k_drawn = _pick_step(stock, draw_stock(g), take_discard(g))
    g, k = _pick_step(choose, (_decide(g, DRAW), _code(STOP)), (drawn, k_drawn))
    return _pick_step(claim, (g, _code(WIN_ROUND)), (g, k))


def move_pile_to_stock(g: Game) -> tuple[Game, Array]:
    """``Game._reshuffle`` before its shuffle: the discard pile (its top kept with
    ``reshuffle="keep_top"``) becomes the stock, its cards hidden again; and how many moved."""
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
    )
    return moved, m


def reshuffle(g: Game) -> Game:
    """``Game._reshuffle``: the discard pile (its top kept with ``reshuffle="keep_top"``)
    becomes the stock, shuffled; its cards are hidden again."""
    moved, m = move_pile_to_stock(g)
    return _pick(m > 0, shuffle_stock(moved, m), g)


def draw_stock(g: Game) -> Step:
    """``Game._draw_stock``: the stock's top card is held, then played."""
    k = g.nstock - 1
    card = g.stock[jnp.maximum(k, 0)]
    return g._replace(nstock=k, held=card, hidden=_add(g.hidden, card, -1)), _code(PLAY_HELD)


def take_discard(g: Game) -> Step:
    """``Game._take_discard``: the discard pile's top card is held, then played."""
    k = g.ndiscard - 1
    return g._replace(held=g.discard[jnp.maximum(k, 0)], ndiscard=k), _code(PLAY_HELD)


def held_card(g: Game, may_swap: bool | Array) -> tuple[Array, ...]:
    """What one pass of ``Game._play_held``'s loop does with the held card: ask the wild's
    slot, ask the swap, or place it (in the slot it names, a wild in the last face-down one);
    else the turn ends. Returns ``(ask_wild, swap, place, slot, as_wild)``."""
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


def play_held(g: Game, may_swap: bool | Array = True) -> Step:
    """One pass of ``Game._play_held``'s loop: the held card asks a decision, or is put (and
    the loop goes on with the card it uncovers), or fits nowhere: it is discarded and the
    turn passes (``may_swap=False``: a declined swap)."""
    ask_wild, swap, place, slot, as_wild = held_card(g, may_swap)
    ended = (discard_held(g), _code(NEXT_TURN))
    asked = _pick(ask_wild, _decide(g, WILD), _decide(g, SWAP))
    g, k = _pick_step(place & ~ask_wild, put(g, slot, as_wild), ended)
    return _pick_step(ask_wild | swap, (asked, _code(STOP)), (g, k))


def put(g: Game, slot: Array, as_wild: Array) -> Step:
    """``Game._put``: the held card laid in ``slot``; the last face-down slot completes the
    layout, or first asks the call (``call_trash``, in play, not yet called)."""
    p = g.current
    down = g.face_down[p]
    completes = (down == 0) | ((down == 1) & (g.state[p, slot] == DOWN))
    ask = completes & (g.cfg[CFG_CALL_TRASH] != 0) & (g.phase == PHASE_PLAY) & ~g.called
    call = _decide(g._replace(pending_slot=slot, pending_wild=jnp.asarray(as_wild)), CALL)
    g = _pick(ask, call, lay(g, slot, as_wild))
    k = jnp.where(ask, STOP, jnp.where(completes, LAYOUT_COMPLETE, PLAY_HELD))
    return g, k.astype(I32)


def lay(g: Game, slot: Array, as_wild: Array) -> Game:
    """``Game._lay``: the held card face up in ``slot``; the card that lay there is held."""
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


def layout_complete(g: Game) -> Step:
    """``Game._layout_complete``: in the free turns the loser's round ends; else the player
    wins it."""
    free = g.phase == PHASE_FREE_DRAWS
    g = _pick(free, g._replace(completed=_set(g.completed, g.current, True)), g)
    return g, jnp.where(free, FINISH_ROUND, WIN_ROUND).astype(I32)


def discard_held(g: Game) -> Game:
    """``Game._discard_held``: the held card, if any, on top of the discard pile."""
    has = g.held >= 0
    index = jnp.clip(g.ndiscard, 0, g.discard.shape[0] - 1)
    discard = jnp.where(has, _set(g.discard, index, g.held), g.discard)
    return g._replace(discard=discard, ndiscard=g.ndiscard + has, held=_code(-1))


def miss_call(g: Game) -> Step:
    """``Game._miss_call``: no call on the last slot: the card is discarded, a penalty card
    drawn (the stock reshuffled if empty) and discarded, the round claimed next turn."""
    g = discard_held(g)
    g = _pick(g.nstock == 0, reshuffle(g), g)
    k = g.nstock - 1
    card = g.stock[jnp.maximum(k, 0)]
    drawn = g._replace(nstock=k, hidden=_add(g.hidden, card, -1), held=card)
    g = _pick(g.nstock > 0, discard_held(drawn), g)
    return g._replace(pending_claim=_set(g.pending_claim, g.current, True)), _code(NEXT_TURN)


def next_turn(g: Game) -> Step:
    """``Game._next_turn``: the game is truncated at ``max_turns``; in the free turns the
    loser plays on until they run out; else the next player's turn begins."""
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


def win_round(g: Game) -> Step:
    """``Game._win_round`` of the player to act (the only player who ever wins one): with
    ``free_draws`` the loser gets free turns, unless a missed call left them complete."""
    n = g.layout.shape[0]
    player = g.current
    g = discard_held(g._replace(round_winner=player, completed=_set(g.completed, player, True)))
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


def round_result(g: Game) -> tuple[Game, Array]:
    """``Game._finish_round`` after the discard: who shrinks (the completed layouts, and with
    ``losers_reveal`` every loser whose face-down cards all fit), then the game's end or the
    next round's starter in ``current``. Returns the game and whether it is over."""
    n = g.layout.shape[0]
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
    return _pick(over, game_over(g, winners), g._replace(current=starter.astype(I32))), over


def finish_round(g: Game) -> Step:
    """``Game._finish_round``: the held card discarded, the round's result, then the game's
    end or the next round."""
    g, over = round_result(discard_held(g))
    return g, jnp.where(over, STOP, START_ROUND).astype(I32)


def game_over(g: Game, winners: Array) -> Game:
    """``Game._game_over``: winners place first; the others by how few face-down slots they
    had left."""
    left = g.face_down_left
    below = (~winners[None, :] & (left[None, :] < left[:, None])).sum(axis=1)
    placings = jnp.where(winners, 1, 1 + winners.sum() + below).astype(I32)
    return g._replace(
        done=jnp.bool_(True), decision=_code(NONE), winners=winners, placings=placings
    )


# ---------------------------------------------------------------------- a decision


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


def apply(g: Game, action: Array) -> Step:
    """``Game.step``'s dispatch of a legal ``action``: the method it runs."""
    d = g.decision
    g = _decide(g, NONE)
    slot = jnp.clip(action, 0, NUM_SLOTS - 1)
    drawn = _pick_step(action == DRAW_STOCK, draw_stock(g), take_discard(g))
    laid = lay(g, g.pending_slot, g.pending_wild)
    answered = _pick_step(action == CALL_TRASH, _trash_called(laid), (laid, _code(MISS_CALL)))
    declined = (g, _code(PLAY_HELD_NOSWAP))
    chosen = _pick_step(action == DECLINE, declined, put(g, slot, d == WILD))
    return _pick_step(d == DRAW, drawn, _pick_step(d == CALL, answered, chosen))


def _trash_called(laid: Game) -> Step:
    """The call "Trash!" made on the completing card just laid: the layout is complete."""
    return laid._replace(called=jnp.bool_(True)), _code(LAYOUT_COMPLETE)


def answer_call(g: Game) -> Step:
    """The call decision answered with ``CALL_TRASH`` (the env's rule): ``apply``'s answer
    alone, without the other decisions' work (a smaller program, here and in the scheduled
    engine, which runs it for the games at a call decision)."""
    return _trash_called(lay(_decide(g, NONE), g.pending_slot, g.pending_wild))


# The method of each continuation code.
_METHODS: tuple[Callable[[Game], Step], ...] = (
    answer_call,
    start_round,
    begin_turn,
    play_held,
    lambda g: play_held(g, False),
    layout_complete,
    miss_call,
    next_turn,
    win_round,
    finish_round,
)


def going(g: Game, k: Array, answer_calls: bool) -> Array:
    """Whether the game plays on: a continuation to run, or (``answer_calls``) a call
    decision to answer."""
    more = k != STOP
    if answer_calls:
        more = more | ((g.decision == CALL) & ~g.done)
    return more


def run(g: Game, k: Array, answer_calls: bool = False) -> Game:
    """Follow continuations from ``k``, one method a pass, until the game stops at a
    decision (a call decision too unless ``answer_calls``) or ends."""

    def one(c: Step) -> Step:
        g, k = c
        return lax.switch(jnp.maximum(k, ANSWER_CALL), _METHODS, g)

    return lax.while_loop(lambda c: going(*c, answer_calls), one, (g, _code(k)))[0]


# ---------------------------------------------------------------------- one game


def new_game(key: Array, arrays: RulesArrays, num_players: int) -> Game:
    """``Game(rules)`` before its first round: every field set, the first player drawn
    (``current``)."""
    n = num_players
    key, sub = threefry.split(key)
    capacity = arrays.deck.shape[0]
    zeros_n = jnp.zeros(n, I32)
    false_n = jnp.zeros(n, jnp.bool_)
    scalar = _code(0)
    return Game(
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
        held=_code(-1),
        current=first_player(sub, n),
        decision=_code(NONE),
        phase=scalar,
        free_left=scalar,
        called=jnp.bool_(False),
        pending_slot=_code(-1),
        pending_wild=jnp.bool_(False),
        round_winner=_code(-1),
        round_starter=scalar,
        deal_number=scalar,
        turns=scalar,
        done=jnp.bool_(False),
        truncated=jnp.bool_(False),
        stock_known=jnp.bool_(False),
        shuffle_count=scalar,
        heavy=scalar,
        pushed=_code(-1),
        put_slot=scalar,
        put_wild=jnp.bool_(False),
        key=key,
        cfg=jnp.asarray(arrays.cfg, I32),
        wild=jnp.asarray(arrays.wild, jnp.bool_),
        totals=jnp.asarray(arrays.totals, I32),
        deck=jnp.asarray(arrays.deck, I32),
    )


def init(key: Array, arrays: RulesArrays, num_players: int, answer_calls: bool = False) -> Game:
    """``Game(rules)`` from ``key``: the first player, the first deal, played to the first
    decision."""
    return run(new_game(key, arrays, num_players), _code(START_ROUND), answer_calls)


def step(g: Game, action: Array, answer_calls: bool = False) -> tuple[Game, Array]:
    """``Game.step``: a legal engine action applied and played on to the next decision; an
    illegal one (or a finished game) changes nothing. Returns the game and whether the action
    was legal."""
    action = jnp.asarray(action, I32)
    legal = is_legal(g, action)
    moved, k = apply(g, action)
    return _pick(legal, run(moved, jnp.where(legal, k, STOP), answer_calls), g), legal


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


def _pick_step(cond: Array, a: Step, b: Step) -> Step:
    """``a`` where ``cond`` else ``b``: the game and its continuation."""
    return _pick(cond, a[0], b[0]), jnp.where(cond, a[1], b[1]).astype(I32)
