"""The JAX engine for a batch: the rules of :mod:`trash_env.jax_env.rules`, scheduled.

:mod:`trash_env.jax_env.rules` is the rule book: one function per reference ``Game`` method,
each with its immediate effects, followed one a pass. Under ``jax.vmap`` that plain run would
compute every method, a reshuffle's and a new deal's sorts included, on every pass of every
game. This module plays the same games faster, and changes no outcome
(tests/test_vector_differential.py plays both against the reference after every decision):

- **Which games run which pass.** The first pass, for the whole batch, runs only the common
  methods (:func:`_common_pass`: a put, the held card's chain, the turn's end and the next
  turn's start); the games still going after it (a round's end, mostly) are gathered in
  chunks (:func:`~trash_env.jax_env.batching.where_needed`) for the rest (:func:`run`).
- **Held-back work.** A continuation changes only the game's small fields: a card it
  discards is held in ``pushed`` and written on the pile after the pass (at most one a pass:
  a turn's end discards once and the next turn's start never reads the pile); a reshuffle or
  a new round's shuffle and deal is flagged in ``heavy`` and done between passes
  (:func:`_heavy`), never in the first pass: only in the gathered games' rest.
- **New games inside the step** (``Restart``, for Pgx's ``auto_reset`` of the env's own
  step and init): a game that ends is replaced, in the gathered rest, by a new one dealt
  from the step's key as ``auto_reset`` deals it, so that a step compiles one run, not a
  second one inside ``init``.
- **Restated for speed.** :func:`_lay_naturals` is ``rules.play_held``'s loop over natural
  cards, bit-packed; ``_begin_turn``, ``_miss_call`` and ``_penalty`` are the rules' methods
  with the reshuffle held back. A rule that changes in one of these changes here too.

The rest (the deal, ``put``, ``lay``, the turn's end, a round's result, the legality of an
action) is the rules module's own functions, called from here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.codes import CFG_CARDS
from trash_env.engine import CALL_TRASH, DECLINE, DOWN, DRAW_STOCK, NATURAL
from trash_env.jax_env import rules as R
from trash_env.jax_env import threefry
from trash_env.jax_env.batching import when, where_needed, while_any
from trash_env.jax_env.rules import (
    BEGIN_TURN,
    CALL,
    DRAW,
    FINISH_ROUND,
    LAYOUT_COMPLETE,
    MISS_CALL,
    NEXT_TURN,
    NONE,
    PLAY_HELD,
    PLAY_HELD_NOSWAP,
    START_ROUND,
    STOP,
    SWAP,
    WILD,
    WIN_ROUND,
    Game,
    _add,
    _code,
    _decide,
    _hit,
    _pick,
    _set,
    is_legal,
    returns,
)
from trash_env.rules_arrays import RulesArrays, rules_arrays

# What the env, the bots and the example read from here (the rules module's, re-exported).
__all__ = [
    "CALL",
    "DRAW",
    "SWAP",
    "WILD",
    "Game",
    "Restart",
    "RulesArrays",
    "init",
    "is_legal",
    "returns",
    "restart",
    "rules_arrays",
    "step",
    "step_and_restart",
]


Array = jax.Array
I32 = jnp.int32

# The scheduler's continuations, beside the rules' (``rules.ANSWER_CALL`` ... ``FINISH_ROUND``):
# the parts of ``rules.begin_turn`` and ``rules.miss_call`` after a held-back reshuffle, and
# the put of a decision (``rules.put`` of ``put_slot``), run in the common pass.
DRAW_OR_TAKE, PENALTY, PUT = 10, 11, 12
# The heavy work a game flags for between passes (``Game.heavy``).
NO_WORK, RESHUFFLE_WORK, NEW_ROUND_WORK = 0, 1, 2


# ---------------------------------------------------------------------- held-back work


def _apply_shuffle(g: Game) -> Game:
    """Shuffle the ``shuffle_count`` staged cards at the bottom of the stock, if any."""
    m = g.shuffle_count
    key, sub = threefry.split(g.key)
    order = R.shuffle_order(sub, m, g.stock.shape[0])
    shuffled = g._replace(stock=g.stock[order], key=key, shuffle_count=jnp.zeros_like(m))
    return lax.cond(m > 0, lambda: shuffled, lambda: g)


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
    moved, m = R.move_pile_to_stock(g)
    return _pick(m > 0, moved._replace(shuffle_count=m), g)


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
    drawn = _pick(stock, R.draw_stock(g)[0], R.take_discard(g)[0])
    g = _pick(choose, _decide(g, DRAW), drawn)
    return g, jnp.where(choose, STOP, PLAY_HELD).astype(I32)


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


def _apply(g: Game, action: Array) -> tuple[Game, Array]:
    """A legal action applied: the game and the continuation to run."""
    d = g.decision
    drawn = _pick(action == DRAW_STOCK, R.draw_stock(g)[0], R.take_discard(g)[0])
    put = g._replace(put_slot=action, put_wild=d == WILD)
    laid = R.lay(g, g.pending_slot, g.pending_wild)
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


def _next_turn_and_draw(g: Game) -> tuple[Game, Array]:
    """``_next_turn``, then ``_begin_turn`` and ``_draw_or_take`` in the same pass where the
    game goes on to them (the common end of a turn: one pass, not three)."""
    g1, k1 = R.next_turn(g)
    g2, k2 = _begin_turn(g1)
    g3, k3 = _draw_or_take(g2)
    on2 = k1 == BEGIN_TURN
    on3 = on2 & (k2 == DRAW_OR_TAKE) & (g2.heavy == NO_WORK)
    g = _pick(on3, g3, _pick(on2, g2, g1))
    return g, jnp.where(on3, k3, jnp.where(on2, k2, k1)).astype(I32)


def _then(
    g: Game, k: Array, code: int, continuation: Continuation, where: Array | bool = True
) -> tuple[Game, Array]:
    """``continuation`` where the game goes on to ``code`` (and ``where``), else the game as
    it is; a card discarded earlier in the same pass stays in ``pushed`` (at most one is
    discarded)."""
    on = (k == code) & where
    out, k_out = continuation(g)
    out = out._replace(pushed=jnp.where(out.pushed >= 0, out.pushed, g.pushed))
    return _pick(on, out, g), jnp.where(on, k_out, k).astype(I32)


def _round_end(g: Game, k: Array) -> tuple[Game, Array]:
    """From LAYOUT_COMPLETE, WIN_ROUND or FINISH_ROUND, the ones that follow in the same pass
    (each computed once: the end of a round is one pass, not three)."""
    g, k = _then(g, k, LAYOUT_COMPLETE, R.layout_complete)
    g, k = _then(g, k, WIN_ROUND, lambda g: R.win_round(_discard_held(g)))
    return _then(g, k, FINISH_ROUND, _finish_round)


def _finish_round(g: Game) -> tuple[Game, Array]:
    """``rules.finish_round`` with its discard held back and the next round's shuffle and
    deal flagged for between passes."""
    g, k = R.finish_round(_discard_held(g))
    new_round = k == START_ROUND
    g = g._replace(heavy=jnp.where(new_round, NEW_ROUND_WORK, g.heavy).astype(I32))
    return g, jnp.where(new_round, BEGIN_TURN, k).astype(I32)


def _put(g: Game) -> tuple[Game, Array]:
    """``rules.put`` of the held card in ``put_slot`` (as a wild if ``put_wild``)."""
    return R.put(g, g.put_slot, g.put_wild)


# The continuations ``_pass`` runs: those that neither the common passes (``_COMMON``), the
# round's end nor the heavy work (with the turn it held up) run at the start of ``run``'s
# next round (STOP: a call decision to answer). Any other continuation waits for that round
# unchanged. In this order none runs the continuation another one returns, so each game runs
# at most one of them a pass (and discards at most one card).
_OTHERS: tuple[tuple[int, Continuation], ...] = (
    (PENALTY, _penalty),
    (DRAW_OR_TAKE, _draw_or_take),
    (MISS_CALL, _miss_call),
    (BEGIN_TURN, _begin_turn),
    (STOP, R.answer_call),
)

# The game's rules (no continuation changes them).
_RULES = ("cfg", "wild", "totals", "deck")


def _pass(carry: tuple[Game, Array], on: Array) -> tuple[Game, Array]:
    """One continuation of the game where ``on``, then the card it discarded, if any;
    elsewhere the game as it is (each continuation selects only the fields it changes)."""
    g, k = carry
    for code, continuation in _OTHERS:
        g, k = _then(g, k, code, continuation, on)
    return _write_pushed(g), k


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
    ask_wild, swap, place, put_slot, put_wild = R.held_card(g, laid | (k != PLAY_HELD_NOSWAP))
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
    g = _pick(new_round, R.deal(g), g)
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


class Restart(NamedTuple):
    """A step that starts a new game where it ends one (Pgx's ``auto_reset``, inside the
    engine's run: the new game's deal and first turn run in the gathered rest, beside the
    rounds that end there, instead of in a second copy of the run). Each game's fields:"""

    force: Array  # bool: end the game now (the env's illegal action), whatever the engine says
    key: Array  # the step's key: the first new game is dealt from split(key)[1]
    started: Array  # int32: new games started in this step (0: none)
    done: Array  # bool: the game as the step ended it (set where ``started`` > 0)
    truncated: Array  # bool
    returns: Array  # float32 (n,)


def restart(force: Array, key: Array, num_players: int) -> Restart:
    """A ``Restart`` for one game: a new game where the step ends one (or where ``force``)."""
    false = jnp.bool_(False)
    return Restart(force, key, _code(0), false, false, jnp.zeros(num_players, jnp.float32))


def _needs_restart(g: Game, k: Array, r: Restart) -> Array:
    return (k == STOP) & (g.done | r.force)


def _new_game(g: Game, k: Array, r: Restart) -> tuple[Game, Array, Restart]:
    """Where the game is over (or ``force``): its outcome noted, and a new game, as
    ``auto_reset`` deals it: ``init`` of ``split(key)[1]``, then (while a new game is over
    before its first decision) of ``split(carry)[1]`` with ``carry = split(carry)[0]``. The
    new game's deal and first turn are flagged (``NEW_ROUND_WORK``, ``BEGIN_TURN``) as
    ``init`` runs them."""
    need = _needs_restart(g, k, r)
    first = r.started == 0
    chain = jnp.where(first, threefry.split_at(r.key, 1), r.key)
    carry, sub = threefry.split(chain)
    game_key = jnp.where(first, chain, sub)
    arrays = RulesArrays._make((g.cfg, g.wild, g.totals, g.deck))  # the rules, traced
    fresh = R.new_game(game_key, arrays, g.layout.shape[0])._replace(heavy=_code(NEW_ROUND_WORK))
    noted = need & first
    r = Restart(
        force=r.force & ~need,
        key=jnp.where(need, jnp.where(first, chain, carry), r.key),
        started=r.started + need,
        done=jnp.where(noted, g.done, r.done),
        truncated=jnp.where(noted, g.truncated, r.truncated),
        returns=jnp.where(noted, returns(g), r.returns),
    )
    return _pick(need, fresh, g), jnp.where(need, BEGIN_TURN, k).astype(I32), r


def run(
    g: Game, k: Array, answer_calls: bool = False, restart: Restart | None = None
) -> tuple[Game, Restart | None]:
    """Follow continuations until the game stops at a decision (a call decision too unless
    ``answer_calls``) or ends; with ``restart``, a game that ends (or is forced to) is
    replaced by a new one, played to its first decision (``Restart``). Under vmap a loop runs
    as many passes as the batch's longest chain, each pass every continuation, while most
    games need one to three passes of the ``_COMMON`` ones: the first pass runs those for
    the whole batch, the rest for the games still going only (``where_needed``), in rounds
    of: a new game where one ended (with ``restart``), the heavy work (and the turn it held
    up) where flagged, common passes while any game has one to make, and one pass of every
    continuation for the games whose next one is not common. Each part runs only where a
    game's continuation is the part's and leaves the other games as they are, so that under
    vmap neither the parts nor their loops (``while_any``) select between a result and the
    game as it was."""

    def going(g: Game, k: Array) -> Array:
        more = k != STOP
        if answer_calls:
            more = more | ((g.decision == CALL) & ~g.done)
        return more

    def unfinished(g: Game, k: Array, r: Restart | None) -> Array:
        more = going(g, k)
        return more if r is None else more | _needs_restart(g, k, r)

    def common_passes(carry: tuple[Game, Array]) -> tuple[Game, Array]:
        g, k = while_any(lambda c: going(*c) & _is_common(*c), _common_pass, carry)
        return _write_pushed(g), k

    def round_of_rest(carry: tuple) -> tuple:
        g, k, r = carry
        if r is not None:  # computed only where some game of the chunk needs it
            need = _needs_restart(g, k, r)
            g, k, r = when(need, lambda c: _new_game(*c), (g, k, r), keeps_others=True)
        # Each part below runs only where the game's continuation (or its flagged heavy work)
        # is the part's, and leaves the other games as they are: no selection around it.
        g, k = _round_end(g, k)
        g, k = _heavy_then_start((_write_pushed(g), k))
        g, k = common_passes((g, k))
        other = going(g, k) & ~_is_common(g, k) & (g.heavy == NO_WORK)
        return (*_pass((g, k), other), r)

    def rest(carry: tuple) -> tuple:
        g, k, r = while_any(lambda c: unfinished(*c), round_of_rest, carry)
        return g._replace(**{f: getattr(carry[0], f) for f in _RULES}), k, r  # unchanged

    rules = {f: getattr(g, f) for f in _RULES}
    # The first pass, for the whole batch: one common pass (it leaves the other games as
    # they are), which most games need and stop after.
    g, k = _common_pass((g, _code(k)))
    g = _write_pushed(g)
    g, _, restart = where_needed(unfinished(g, k, restart), rest, (g, k, restart))
    # The rules are unchanged, and so known to be: selections of them cost nothing.
    return g._replace(**rules), restart


# ---------------------------------------------------------------------- public functions


def init(key: Array, arrays: RulesArrays, num_players: int, answer_calls: bool = False) -> Game:
    """``rules.init``, scheduled: the new game's deal and the first turn's start run here for
    each game (every new game needs them), then ``run``."""
    g = R.new_game(key, arrays, num_players)._replace(heavy=_code(NEW_ROUND_WORK))
    g, k = _heavy_then_start((g, _code(BEGIN_TURN)))
    return run(g, k, answer_calls)[0]


def step(
    g: Game, action: Array, answer_calls: bool = False, restart: Restart | None = None
) -> tuple[Game, Array]:
    """``rules.step``, scheduled: a legal engine action applied and played on to the next
    decision; an illegal one (or a finished game) changes nothing. Returns the game and
    whether the action was legal. With ``restart`` (:func:`step_and_restart`), a game that
    ends is replaced by a new one."""
    return step_and_restart(g, action, answer_calls, restart)[:2]


def step_and_restart(
    g: Game, action: Array, answer_calls: bool, restart: Restart | None
) -> tuple[Game, Array, Restart | None]:
    """:func:`step`, and where the game ends in it (or ``restart.force``), a new game played
    to its first decision in its place (``Restart``): the game, whether the action was legal
    and the restart's record (``None`` without one)."""
    action = jnp.asarray(action, I32)
    legal = is_legal(g, action)
    # An illegal action applies nothing and runs nothing (its continuation is STOP), so only
    # the fields ``_apply`` changes are chosen, before the run (the decision it clears is
    # restored after it: a call left unanswered stays so).
    applied, k = _apply(g, action)
    moved = _pick(legal, applied, g._replace(decision=applied.decision))
    out, restart = run(moved, jnp.where(legal, k, STOP), answer_calls, restart)
    kept = ~legal if restart is None else ~legal & (restart.started == 0)
    return out._replace(decision=jnp.where(kept, g.decision, out.decision)), legal, restart
