"""Van der Genugten's clairvoyant player: every hidden card known, against a uniformly random
beginner, in 2-player rounds of the standard rules.

With the deal known (the face-down cards and the stock's order) the round is a one-player
problem against a known random opponent: every draw and pickup is determined, and the only
uncertainty left is the beginner's choice, uniform over its legal moves. Per deal this module
enumerates the decision states (the marks of both layouts, the stock's next card, the discard
top, the held card, the phase and the player to act) and solves them by value iteration: the
clairvoyant maximises its probability of winning, the beginner's moves are averaged. The
clairvoyant would also see the order a reshuffle gives, but that order is drawn only when the
stock runs out, and one per pile is too many to solve: a deal is solved twice, once with a
reshuffle counted as the clairvoyant's loss and once as its win, which bounds the exact value
from below and above (the two agree wherever the clairvoyant's best play never meets a
reshuffle). The rules are those of :mod:`trash_env.exact.compiled` (the engine's), on cards
instead of counts; ``tests/test_exact_clairvoyant.py`` holds a deal's value to a brute-force
search of the engine itself.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.typed import Dict

from trash_env.cards import NUM_RANKS, build_deck
from trash_env.exact.compiled import (
    DECLINE,
    DOWN,
    DRAW,
    DRAW_STOCK,
    NATURAL,
    SWAP,
    WILD,
    WILD_UP,
    _face_down,
    _legal,
)
from trash_env.exact.model import Classes
from trash_env.numba_cache import njit
from trash_env.rules import Rules

# What ends a round: seat 0 won, seat 1 won, the stock ran out with cards under the top.
SEAT0_WINS, SEAT1_WINS, RESHUFFLE = -1, -2, -3
TOLERANCE = 1e-14
# The state: marks of seat 0's then seat 1's slots, then these fields (the first three at
# compiled's offsets, so its _legal and _face_down read this state too).
PLAYER, PHASE, HELD, TOP, NEXT = 0, 1, 2, 3, 4


@njit(cache=True)
def _advance(s, a, b, deal, wild, may_swap):
    """Play the held card and go on to the next decision (0) or the round's end (a code)."""
    n = a + b
    cards = deal.shape[0]
    stock_size = cards - n
    while True:
        me = s[n + PLAYER]
        lo = 0 if me == 0 else a
        size = a if me == 0 else b
        card = s[n + HELD]
        slot = -1
        mark = NATURAL
        if card == wild:
            if _face_down(s, a, b, me) > 1:
                s[n + PHASE] = WILD
                return 0
            slot = 0
            while s[lo + slot] != DOWN:
                slot += 1
            mark = WILD_UP
        elif 1 <= card <= size:
            if s[lo + card - 1] == WILD_UP and may_swap:
                s[n + PHASE] = SWAP
                return 0
            if s[lo + card - 1] == DOWN:
                slot = card - 1
        if slot >= 0:  # lay it: the round is won, or a card comes up to be played
            was = s[lo + slot]
            s[lo + slot] = mark
            if _face_down(s, a, b, me) == 0:
                return SEAT0_WINS if me == 0 else SEAT1_WINS
            s[n + HELD] = deal[lo + slot] if was == DOWN else wild
            may_swap = True
            continue
        # The turn ends: the held card on the pile, the other player's turn begins.
        s[n + TOP] = card
        s[n + HELD] = -1
        s[n + PLAYER] = 1 - me
        left = stock_size - s[n + NEXT]
        pile = cards - n - left  # every card not in a slot or the stock
        if left == 0 and pile > 1:
            return RESHUFFLE
        if left == 0:  # the top alone: it must be taken
            s[n + HELD] = s[n + TOP]
            s[n + TOP] = -1
            may_swap = True
            continue
        s[n + PHASE] = DRAW
        return 0


@njit(cache=True)
def _apply(s, a, b, deal, wild, action):
    """Take ``action`` in the decision state ``s``: the next decision (0) or the end's code."""
    n = a + b
    phase = s[n + PHASE]
    me = s[n + PLAYER]
    lo = 0 if me == 0 else a
    if phase == DRAW:
        if action == DRAW_STOCK:
            s[n + HELD] = deal[n + s[n + NEXT]]
            s[n + NEXT] += 1
        else:
            s[n + HELD] = s[n + TOP]
        s[n + TOP] = -1  # taken, or buried under the card this turn discards
        return _advance(s, a, b, deal, wild, True)
    if action == DECLINE:
        return _advance(s, a, b, deal, wild, False)
    was = s[lo + action]
    s[lo + action] = WILD_UP if phase == WILD else NATURAL
    if _face_down(s, a, b, me) == 0:
        return SEAT0_WINS if me == 0 else SEAT1_WINS
    s[n + HELD] = deal[lo + action] if was == DOWN else wild
    return _advance(s, a, b, deal, wild, True)


@njit(cache=True)
def _key(s, a, b, classes, stock_size):
    n = a + b
    key = 0
    for i in range(n):
        key = key * 3 + s[i]
    key = key * 2 + s[n + PLAYER]
    key = key * 4 + s[n + PHASE]
    key = key * (classes + 1) + s[n + HELD] + 1
    key = key * (classes + 1) + s[n + TOP] + 1
    return key * (stock_size + 1) + s[n + NEXT]


@njit(cache=True)
def deal_values(a, b, deal, classes, first, seat, reshuffle):
    """The clairvoyant's probability of winning the round dealt as ``deal`` (per position its
    card's class: seat 0's slots, seat 1's, then the stock from its top), sitting at ``seat``
    with seat ``first`` to draw first, against a uniformly random beginner; a reshuffle counts
    ``reshuffle`` (0 or 1). Returns the value and the decision states solved."""
    n = a + b
    wild = classes - 1
    stock_size = deal.shape[0] - n
    start = np.zeros(n + 5, dtype=np.int64)
    start[n + PLAYER] = first
    start[n + TOP] = -1
    start[n + HELD] = deal[n]
    start[n + NEXT] = 1
    end = _advance(start, a, b, deal, wild, True)
    if end != 0:
        return (1.0 if (end == SEAT0_WINS) == (seat == 0) else 0.0), 0
    index = Dict.empty(key_type=types.int64, value_type=types.int64)
    states = np.empty((1024, n + 5), dtype=np.int64)
    states[0] = start
    index[_key(start, a, b, classes, stock_size)] = 0
    count = 1
    act_ptr = np.zeros(1025, dtype=np.int64)
    succ = np.empty(4096, dtype=np.int64)
    acts = np.empty(16, dtype=np.int64)
    child = np.empty(n + 5, dtype=np.int64)
    done = 0
    while done < count:
        if act_ptr.shape[0] < count + 2:
            grown = np.zeros(2 * act_ptr.shape[0], dtype=np.int64)
            grown[: act_ptr.shape[0]] = act_ptr
            act_ptr = grown
        legal = _legal(states[done], a, b, acts)
        base = act_ptr[done]
        if succ.shape[0] < base + legal:
            grown = np.empty(2 * succ.shape[0], dtype=np.int64)
            grown[: succ.shape[0]] = succ
            succ = grown
        for j in range(legal):
            child[:] = states[done]
            end = _apply(child, a, b, deal, wild, acts[j])
            if end != 0:
                succ[base + j] = end
                continue
            key = _key(child, a, b, classes, stock_size)
            found = index.get(key, -1)
            if found < 0:
                if count == states.shape[0]:
                    more = np.empty((2 * count, n + 5), dtype=np.int64)
                    more[:count] = states
                    states = more
                found = count
                index[key] = found
                states[count] = child
                count += 1
            succ[base + j] = found
        act_ptr[done + 1] = base + legal
        done += 1
    won = 1.0 if seat == 0 else 0.0
    lost = 1.0 - won
    values = np.zeros(count)
    while True:  # Gauss-Seidel from 0: the least solution, the probability of winning
        delta = 0.0
        for i in range(count - 1, -1, -1):
            mine = states[i, n + PLAYER] == seat
            total = 0.0
            top = 0.0
            for j in range(act_ptr[i], act_ptr[i + 1]):
                t = succ[j]
                if t == SEAT0_WINS:
                    q = won
                elif t == SEAT1_WINS:
                    q = lost
                elif t == RESHUFFLE:
                    q = reshuffle
                else:
                    q = values[t]
                total += q
                top = max(top, q)
            new = top if mine else total / (act_ptr[i + 1] - act_ptr[i])
            delta = max(delta, abs(new - values[i]))
            values[i] = new
        if delta < TOLERANCE:
            return values[0], count


def win_rate(sizes: tuple[int, int], deals: int, seed: int) -> dict:
    """W(clairvoyant vs random) in the round ``sizes`` of the standard rules over ``deals``
    uniformly shuffled decks (seeded by ``seed``), each played from all four seatings (the
    clairvoyant's seat and the first player): the mean, its standard error over deals and a
    95 % interval, for a reshuffle counted as the clairvoyant's loss and as its win."""
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ValueError(f"deals must be an integer of at least 2, got {deals!r}")
    a, b = sizes
    classes = Classes(sizes, Rules())
    of_card = np.array([classes.of(rank) for rank in range(NUM_RANKS)], dtype=np.int64)
    deck = np.array(build_deck(1, False), dtype=np.int64)
    rng = np.random.default_rng(seed)
    bounds = np.zeros((2, deals))
    for d in range(deals):
        deal = of_card[rng.permutation(deck)]
        for first in (0, 1):
            for seat in (0, 1):
                for bound, reshuffle in enumerate((0.0, 1.0)):
                    value, _ = deal_values(a, b, deal, classes.count, first, seat, reshuffle)
                    bounds[bound, d] += value / 4
    low, high = bounds.mean(axis=1)
    error = float(bounds[0].std(ddof=1) / np.sqrt(deals))
    return {
        "sizes": [a, b],
        "deals": deals,
        "seed": seed,
        "win_rate": [float(low), float(high)],
        "standard_error": error,
        "interval": [float(low - 1.96 * error), float(high + 1.96 * error)],
    }
