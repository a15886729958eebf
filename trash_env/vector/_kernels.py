"""The rules of :mod:`trash_env.engine` over a batch of games, compiled by numba.

Each function takes ``r``, one record of the batch's structured state array (a view: writes go
to the batch's arrays), and mirrors the reference ``Game`` method of the same name. The
reference's methods call each other in tail position (a turn's end begins the next turn, a
round's end deals the next round), so here each returns a *continuation* code instead and
:func:`run` loops over them: no recursion, one compiled loop per game.

``cfg`` holds the rules as integers (see ``CFG_*``); ``wild`` the wild table, ``totals`` the
rank counts and ``deck`` the cards in ``build_deck`` order (the shuffles must see the same
order as the reference for the same seed to deal the same cards).
"""

from __future__ import annotations

import inspect
import zlib
from typing import Any

import numpy as np
from numba import prange

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
    CFG_NUM_PLAYERS,
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
    NUM_ACTIONS,
    NUM_DECISIONS,
    PHASE_FREE_DRAWS,
    PHASE_PLAY,
    STAY_SILENT,
    TAKE_DISCARD,
    WILD_UP,
    Decision,
)
from trash_env.engine import zero_sum_share as _zero_sum_share
from trash_env.numba_cache import njit
from trash_env.observation import SLOT_FEATURES
from trash_env.rules import Rules
from trash_env.vector._pcg import integers, seed_words, shuffle
from trash_env.vector._threads import PARALLEL_LOCK, choose_layer

# The parallel kernels' threads wait for work asleep, not spinning (also after import torch):
# "workqueue" when numba's layer had to be chosen for that, else None (numba's choice).
THREADING_LAYER = choose_layer()

# Decisions as the plain integers the records hold (the reference engine's ``Decision``).
NONE, DRAW, WILD, SWAP, CALL = (int(d) for d in Decision)

NO_CARD = NUM_RANKS  # the one-hot position of "no card" (empty discard pile, empty hand)

# Continuations.
STOP, BEGIN_TURN, PLAY_HELD, PLAY_HELD_NOSWAP, START_ROUND, FINISH_ROUND = 0, 1, 2, 3, 4, 5

# numba freezes these globals into its on-disk cache, which it invalidates only when this file
# changes: ``cfg_signature()`` compiled beside them tells batch.py whether they still match.
# The return formula is compiled from the engine's own function (below); numba's cache does not
# notice a change in another file, so its source is part of the signature too.
CFG_SIGNATURE = zlib.crc32(
    (",".join(Rules.option_names()) + inspect.getsource(_zero_sum_share)).encode()
)


@njit(cache=True)
def cfg_signature() -> int:
    return CFG_SIGNATURE


# The engine's zero-sum return formula (trash_env.engine.zero_sum_share), compiled: the one
# definition of every return and deal reward, not a copy.
zero_sum_share = njit(cache=True, inline="always")(_zero_sum_share)


# ---------------------------------------------------------------------- the round


@njit(cache=True)
def new_game(r, first, cfg, wild, deck, totals) -> None:
    """``Game.__init__`` from the record's fresh rng words: sizes, counters, first deal; the
    first player is ``first``, or drawn from the game's generator when it is below 0."""
    n = cfg[CFG_NUM_PLAYERS]
    for p in range(n):
        r.sizes[p] = cfg[CFG_START_SIZE]
        r.rounds_won[p] = 0
        r.winners[p] = 0
        r.placings[p] = 0
        r.deal_reward[p] = 0.0
        r.shrunk[p] = 0
    r.deal_number = 0
    r.turns = 0
    r.done = False
    r.truncated = False
    r.decision = NONE
    r.current = integers(r.rng, n) if first < 0 else first
    run(r, START_ROUND, cfg, wild, deck, totals)


@njit(cache=True)
def start_round(r, cfg, deck, totals) -> int:
    n = cfg[CFG_NUM_PLAYERS]
    cards = cfg[CFG_CARDS]
    order = r.discard  # scratch: the discard pile starts empty
    for i in range(cards):
        order[i] = deck[i]
    shuffle(r.rng, order, cards)
    i = 0
    for p in range(n):
        size = r.sizes[p]
        for s in range(NUM_SLOTS):
            if s < size:
                r.layout[p, s] = order[i]
                r.state[p, s] = DOWN
                i += 1
            else:
                r.layout[p, s] = -1
                r.state[p, s] = ABSENT
        r.face_down[p] = size
        r.pending_claim[p] = 0
        r.completed[p] = 0
    # The stock is the rest of the order, top at the end: stock[k] = order[cards - 1 - k].
    left = cards - i
    for k in range(left):
        r.stock[k] = order[cards - 1 - k]
    r.nstock = left
    r.ndiscard = 0
    r.held = -1
    for c in range(NUM_RANKS):
        r.hidden[c] = totals[c]
    r.stock_known = False
    r.phase = PHASE_PLAY
    r.free_left = 0
    r.called = False
    r.pending_slot = -1
    r.pending_wild = False
    r.round_winner = -1
    r.round_starter = r.current  # the starter was left in ``current``
    return BEGIN_TURN


@njit(cache=True, inline="always")
def begin_turn(r, cfg) -> int:
    player = r.current
    r.called = False
    if r.pending_claim[player]:
        return win_round(r, player, cfg)
    if r.nstock == 0:
        reshuffle(r, cfg)
    if r.nstock > 0 and r.ndiscard > 0:
        r.decision = DRAW
        return STOP
    if r.nstock > 0:
        draw_stock(r)
    else:
        take_discard(r)
    return PLAY_HELD


@njit(cache=True)
def reshuffle(r, cfg) -> None:
    nd = r.ndiscard
    if cfg[CFG_RESHUFFLE] != RESHUFFLE_ALL and nd > 0:
        m = nd - 1
        top = r.discard[nd - 1]
        keep = 1
    else:
        m = nd
        top = -1
        keep = 0
    if m == 0:
        return
    for k in range(m):
        card = r.discard[k]
        r.stock[k] = card
        r.hidden[card] += 1
    shuffle(r.rng, r.stock, m)
    r.nstock = m
    if keep:
        r.discard[0] = top
    r.ndiscard = keep
    r.stock_known = True


@njit(cache=True, inline="always")
def draw_stock(r) -> None:
    k = r.nstock - 1
    card = r.stock[k]
    r.nstock = k
    r.held = card
    r.hidden[card] -= 1


@njit(cache=True, inline="always")
def take_discard(r) -> None:
    k = r.ndiscard - 1
    r.held = r.discard[k]
    r.ndiscard = k


@njit(cache=True, inline="always")
def play_held(r, may_swap, cfg, wild) -> int:
    """Place the held card and what it uncovers until a decision or the turn's end."""
    player = r.current
    card = r.held
    size = r.sizes[player]
    while True:
        if wild[card]:
            if r.face_down[player] > 1:
                r.decision = WILD
                return STOP
            first = 0
            while r.state[player, first] != DOWN:
                first += 1
            return put(r, first, True, cfg, wild)  # the last face-down slot: completes
        if card < 1 or card > size:
            break
        slot = card - 1
        was = r.state[player, slot]
        if was != DOWN:
            if was == WILD_UP and may_swap:
                r.decision = SWAP
                return STOP
            break
        if r.face_down[player] == 1:
            return put(r, slot, False, cfg, wild)  # completes the layout
        under = r.layout[player, slot]
        r.layout[player, slot] = card
        r.state[player, slot] = NATURAL
        r.face_down[player] -= 1
        r.hidden[under] -= 1
        r.held = under
        card = under
    # The turn ends.
    r.discard[r.ndiscard] = card
    r.ndiscard += 1
    r.held = -1
    return next_turn(r, cfg)


@njit(cache=True, inline="always")
def put(r, slot, as_wild, cfg, wild) -> int:
    player = r.current
    down = r.face_down[player]
    completes = down == 0 or (down == 1 and r.state[player, slot] == DOWN)
    if completes and cfg[CFG_CALL_TRASH] and r.phase == PHASE_PLAY and not r.called:
        r.pending_slot = slot
        r.pending_wild = as_wild
        r.decision = CALL
        return STOP
    lay(r, slot, as_wild)
    if completes:
        return layout_complete(r, cfg, wild)
    return PLAY_HELD


@njit(cache=True, inline="always")
def lay(r, slot, as_wild) -> None:
    player = r.current
    card = r.held
    under = r.layout[player, slot]
    was = r.state[player, slot]
    r.layout[player, slot] = card
    r.state[player, slot] = WILD_UP if as_wild else NATURAL
    if was == DOWN:
        r.face_down[player] -= 1
        r.hidden[under] -= 1
    r.held = under


@njit(cache=True)
def layout_complete(r, cfg, wild) -> int:
    player = r.current
    if r.phase == PHASE_FREE_DRAWS:
        r.completed[player] = 1
        return finish_round(r, cfg, wild)
    return win_round(r, player, cfg)


@njit(cache=True, inline="always")
def discard_held(r) -> None:
    if r.held >= 0:
        r.discard[r.ndiscard] = r.held
        r.ndiscard += 1
    r.held = -1


@njit(cache=True)
def miss_call(r, cfg) -> int:
    player = r.current
    discard_held(r)
    if r.nstock == 0:
        reshuffle(r, cfg)
    if r.nstock > 0:
        k = r.nstock - 1
        card = r.stock[k]
        r.nstock = k
        r.hidden[card] -= 1
        r.discard[r.ndiscard] = card
        r.ndiscard += 1
    r.pending_claim[player] = 1
    return next_turn(r, cfg)


@njit(cache=True, inline="always")
def next_turn(r, cfg) -> int:
    r.turns += 1
    if r.turns >= cfg[CFG_MAX_TURNS]:
        r.done = True
        r.truncated = True
        r.decision = NONE
        return STOP
    if r.phase == PHASE_FREE_DRAWS:
        r.free_left -= 1
        if r.free_left == 0:
            return FINISH_ROUND
    else:
        r.current = (r.current + 1) % cfg[CFG_NUM_PLAYERS]
    return BEGIN_TURN


@njit(cache=True)
def win_round(r, player, cfg) -> int:
    r.round_winner = player
    r.completed[player] = 1
    discard_held(r)
    if cfg[CFG_FREE_DRAWS]:
        loser = 1 - player
        if r.face_down[loser] == 0:  # a missed call left the loser complete already
            r.completed[loser] = 1
            return FINISH_ROUND
        r.phase = PHASE_FREE_DRAWS
        r.free_left = cfg[CFG_FREE_DRAWS]
        r.current = loser
        return BEGIN_TURN
    return FINISH_ROUND


@njit(cache=True)
def finish_round(r, cfg, wild) -> int:
    n = cfg[CFG_NUM_PLAYERS]
    discard_held(r)
    for p in range(n):
        r.shrunk[p] = r.completed[p]
        r.face_down_left[p] = r.face_down[p]
    if cfg[CFG_LOSERS_REVEAL]:
        for p in range(n):
            if r.completed[p]:
                continue
            correct = True
            for s in range(r.sizes[p]):
                if r.state[p, s] == DOWN:
                    card = r.layout[p, s]
                    if not (card == s + 1 or wild[card]):
                        correct = False
            if correct:
                r.shrunk[p] = 1
    shrinkers = 0
    game_winners = 0
    for p in range(n):
        if r.shrunk[p]:
            shrinkers += 1
            r.sizes[p] -= 1
            r.rounds_won[p] += 1
            if r.sizes[p] <= cfg[CFG_TARGET_SIZE]:
                game_winners += 1
    # The kernels' copy of trash_env.reward.deal_shares (numba cannot call it): the deal's
    # zero-sum shares (Game.shares_to_returns), summed for per-deal rewards; test_reward.py
    # holds the two equal.
    if shrinkers:
        for p in range(n):
            r.deal_reward[p] += zero_sum_share(r.shrunk[p], shrinkers, n)
    r.deal_number += 1
    if game_winners:
        for p in range(n):
            r.winners[p] = 1 if r.shrunk[p] != 0 and r.sizes[p] <= cfg[CFG_TARGET_SIZE] else 0
        game_over(r, n)
        return STOP
    if cfg[CFG_EPISODE] == EPISODE_ROUND:
        for p in range(n):
            r.winners[p] = r.shrunk[p]
        game_over(r, n)
        return STOP
    if cfg[CFG_MAX_DEALS] and r.deal_number >= cfg[CFG_MAX_DEALS]:
        smallest = 99
        for p in range(n):
            smallest = min(smallest, r.sizes[p])
        for p in range(n):
            r.winners[p] = 1 if r.sizes[p] == smallest else 0
        game_over(r, n)
        return STOP
    if cfg[CFG_FIRST_PLAYER] == ROTATE:
        r.current = (r.round_starter + 1) % n
    else:
        r.current = r.round_winner
    return START_ROUND


@njit(cache=True)
def game_over(r, n) -> None:
    """Winners place first; the others by how few face-down slots they had left."""
    r.done = True
    r.decision = NONE
    winners = 0
    for p in range(n):
        if r.winners[p]:
            winners += 1
    for p in range(n):
        if r.winners[p]:
            r.placings[p] = 1
        else:
            below = 0
            for q in range(n):
                if not r.winners[q] and r.face_down_left[q] < r.face_down_left[p]:
                    below += 1
            r.placings[p] = 1 + winners + below


@njit(cache=True)
def run(r, k, cfg, wild, deck, totals) -> None:
    """Follow continuations until the game stops at a decision or ends."""
    while k != STOP:
        if k == PLAY_HELD:
            k = play_held(r, True, cfg, wild)
        elif k == BEGIN_TURN:
            k = begin_turn(r, cfg)
        elif k == PLAY_HELD_NOSWAP:
            k = play_held(r, False, cfg, wild)
        elif k == FINISH_ROUND:
            k = finish_round(r, cfg, wild)
        else:
            k = start_round(r, cfg, deck, totals)


@njit(cache=True, inline="always")
def is_legal(r, action) -> bool:
    d = r.decision
    if d == DRAW:
        return action == DRAW_STOCK or action == TAKE_DISCARD
    if d == WILD:
        return 0 <= action < r.sizes[r.current] and r.state[r.current, action] == DOWN
    if d == SWAP:
        return action == r.held - 1 or action == DECLINE
    if d == CALL:
        return action == CALL_TRASH or action == STAY_SILENT
    return False


@njit(cache=True)
def step(r, action, cfg, wild, deck, totals) -> bool:
    """``Game.step``: apply a legal action and play on; False (nothing changed) if illegal."""
    if not is_legal(r, action):
        return False
    d = r.decision
    if d == DRAW:
        if action == DRAW_STOCK:
            draw_stock(r)
        else:
            take_discard(r)
        k = PLAY_HELD
    elif d == WILD:
        k = put(r, action, True, cfg, wild)
    elif d == SWAP:
        if action == DECLINE:
            k = PLAY_HELD_NOSWAP
        else:
            k = put(r, action, False, cfg, wild)
    elif action == CALL_TRASH:
        r.called = True
        lay(r, r.pending_slot, r.pending_wild)
        k = layout_complete(r, cfg, wild)
    else:
        lay(r, r.pending_slot, r.pending_wild)
        k = miss_call(r, cfg)
    run(r, k, cfg, wild, deck, totals)
    return True


# ---------------------------------------------------------------------- batch kernels


@njit(cache=True, inline="always")
def new_game_in(r, seed, first, cfg, wild, deck, totals) -> None:
    """A new game in record ``r`` as ``Game(rules, seed=seed, first_player=first)`` (``first``
    below 0: drawn from the game's generator, as ``first_player=None``)."""
    seed_words(seed, r.rng)
    new_game(r, first, cfg, wild, deck, totals)


@njit(cache=True)
def _batch_new_games(games, index, seeds, firsts, cfg, wild, deck, totals) -> None:
    """Start a new game in each slot ``index[i]``, as ``Game(rules, seed=seeds[i],
    first_player=firsts[i])`` (``firsts[i] < 0``: drawn, as ``first_player=None``)."""
    for i in range(index.shape[0]):
        new_game_in(games[index[i]], seeds[i], firsts[i], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_new_games_parallel(games, index, seeds, firsts, cfg, wild, deck, totals) -> None:
    for i in prange(index.shape[0]):
        new_game_in(games[index[i]], seeds[i], firsts[i], cfg, wild, deck, totals)


@njit(cache=True, inline="always")
def step_game(r, action, cfg, wild, deck, totals) -> bool:
    """One decision in a game that is not over; False (nothing changed) if illegal or over."""
    return False if r.done else step(r, action, cfg, wild, deck, totals)


@njit(cache=True)
def _batch_step(games, actions, legal, cfg, wild, deck, totals) -> None:
    """One decision in every game that is not over; ``legal[g]`` tells whether it was legal."""
    for g in range(games.shape[0]):
        legal[g] = step_game(games[g], actions[g], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_step_parallel(games, actions, legal, cfg, wild, deck, totals) -> None:
    for g in prange(games.shape[0]):
        legal[g] = step_game(games[g], actions[g], cfg, wild, deck, totals)


@njit(cache=True, inline="always")
def step_and_record(g, games, actions, legal, finished, final_returns, cfg, wild, deck, totals):
    """``step_game`` in game ``g``; if it ends, flag it in ``finished`` and write its
    ``Game.returns()`` to ``final_returns[g]``."""
    n = cfg[CFG_NUM_PLAYERS]
    r = games[g]
    finished[g] = False
    legal[g] = step_game(r, actions[g], cfg, wild, deck, totals)
    if legal[g] and r.done:
        finished[g] = True
        winners = 0
        for p in range(n):
            winners += r.winners[p]
        for p in range(n):
            if winners == 0 or r.truncated:
                final_returns[g, p] = 0.0
            else:
                final_returns[g, p] = zero_sum_share(r.winners[p], winners, n)


@njit(cache=True)
def assign_seeds(finished, seeds, new_seeds) -> int:
    """The next of ``seeds`` to each finished game, in ascending slot order; returns how many
    were used (a serial pass, so both kernels below hand out the same seeds)."""
    used = 0
    for g in range(finished.shape[0]):
        if finished[g]:
            new_seeds[g] = seeds[used]
            used += 1
    return used


@njit(cache=True)
def _batch_step_autoreset(
    games, actions, legal, finished, final_returns, seeds, new_seeds, cfg, wild, deck, totals
) -> int:
    """``batch_step``, then every game that ended is recorded (``finished[g]``, its
    ``Game.returns()`` in ``final_returns[g]``) and re-dealt from the next of ``seeds``
    (its seed in ``new_seeds[g]``); returns how many seeds were used (enough are given)."""
    for g in range(games.shape[0]):
        step_and_record(g, games, actions, legal, finished, final_returns, cfg, wild, deck, totals)
    used = assign_seeds(finished, seeds, new_seeds)
    for g in range(games.shape[0]):
        if finished[g]:
            new_game_in(games[g], new_seeds[g], -1, cfg, wild, deck, totals)
    return used


@njit(cache=True, parallel=True)
def _batch_step_autoreset_parallel(
    games, actions, legal, finished, final_returns, seeds, new_seeds, cfg, wild, deck, totals
) -> int:
    for g in prange(games.shape[0]):
        step_and_record(g, games, actions, legal, finished, final_returns, cfg, wild, deck, totals)
    used = assign_seeds(finished, seeds, new_seeds)
    for g in prange(games.shape[0]):
        if finished[g]:
            new_game_in(games[g], new_seeds[g], -1, cfg, wild, deck, totals)
    return used


@njit(cache=True)
def _batch_step_index(games, index, actions, legal, cfg, wild, deck, totals) -> None:
    """``actions[i]`` in game ``index[i]``."""
    for i in range(index.shape[0]):
        legal[i] = step_game(games[index[i]], actions[i], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_step_index_parallel(games, index, actions, legal, cfg, wild, deck, totals) -> None:
    for i in prange(index.shape[0]):
        legal[i] = step_game(games[index[i]], actions[i], cfg, wild, deck, totals)


@njit(cache=True)
def mask_into(r, player, out) -> None:
    """``observation.action_mask``: the env actions open to ``player`` (zero if not to act)."""
    for a in range(NUM_ACTIONS):
        out[a] = 0
    if r.done or r.current != player:
        return
    d = r.decision
    if d == DRAW:
        out[DRAW_STOCK] = 1
        out[TAKE_DISCARD] = 1
    elif d == WILD:
        for s in range(r.sizes[player]):
            if r.state[player, s] == DOWN:
                out[s] = 1
    elif d == SWAP:
        out[r.held - 1] = 1
        out[DECLINE] = 1


@njit(cache=True)
def _batch_masks(games, players, out) -> None:
    for g in range(games.shape[0]):
        mask_into(games[g], players[g], out[g])


@njit(cache=True, parallel=True)
def _batch_masks_parallel(games, players, out) -> None:
    for g in prange(games.shape[0]):
        mask_into(games[g], players[g], out[g])


@njit(cache=True)
def _batch_masks_index(games, index, players, out) -> None:
    for i in range(index.shape[0]):
        mask_into(games[index[i]], players[i], out[i])


@njit(cache=True, parallel=True)
def _batch_masks_index_parallel(games, index, players, out) -> None:
    for i in prange(index.shape[0]):
        mask_into(games[index[i]], players[i], out[i])


@njit(cache=True)
def observe_into(r, observer, out, n, wild, totals, cards) -> None:
    """``observation.encode_observation`` into ``out`` (float32), value for value."""
    acting = -1 if r.done else r.current
    i = 0
    for k in range(n):
        p = (observer + k) % n
        for s in range(NUM_SLOTS):
            st = r.state[p, s]
            for f in range(SLOT_FEATURES):
                out[i + f] = 1.0 if f == st else 0.0
            i += SLOT_FEATURES
        out[i] = r.sizes[p] / NUM_SLOTS
        out[i + 1] = r.rounds_won[p] / NUM_SLOTS
        out[i + 2] = r.face_down[p] / NUM_SLOTS
        out[i + 3] = 1.0 if p == acting else 0.0
        i += 4
    top = r.discard[r.ndiscard - 1] if r.ndiscard > 0 else NO_CARD
    for c in range(NUM_RANKS + 1):
        out[i + c] = 1.0 if c == top else 0.0
    i += NUM_RANKS + 1
    held = r.held if r.held >= 0 else NO_CARD
    for c in range(NUM_RANKS + 1):
        out[i + c] = 1.0 if c == held else 0.0
    i += NUM_RANKS + 1
    for c in range(NUM_RANKS):
        total = totals[c]
        out[i + c] = (total - r.hidden[c]) / total if total else 0.0
    i += NUM_RANKS
    for c in range(NUM_RANKS):
        out[i + c] = 1.0 if wild[c] else 0.0
    i += NUM_RANKS
    for d in range(NUM_DECISIONS):
        out[i + d] = 1.0 if d == r.decision else 0.0
    i += NUM_DECISIONS
    out[i] = r.nstock / cards
    out[i + 1] = r.ndiscard / cards


@njit(cache=True)
def _batch_observe(games, observers, out, cfg, wild, totals) -> None:
    n = cfg[CFG_NUM_PLAYERS]
    cards = cfg[CFG_CARDS]
    for g in range(games.shape[0]):
        observe_into(games[g], observers[g], out[g], n, wild, totals, cards)


@njit(cache=True, parallel=True)
def _batch_observe_parallel(games, observers, out, cfg, wild, totals) -> None:
    n = cfg[CFG_NUM_PLAYERS]
    cards = cfg[CFG_CARDS]
    for g in prange(games.shape[0]):
        observe_into(games[g], observers[g], out[g], n, wild, totals, cards)


@njit(cache=True)
def _batch_observe_index(games, index, observers, out, cfg, wild, totals) -> None:
    n = cfg[CFG_NUM_PLAYERS]
    cards = cfg[CFG_CARDS]
    for i in range(index.shape[0]):
        observe_into(games[index[i]], observers[i], out[i], n, wild, totals, cards)


@njit(cache=True, parallel=True)
def _batch_observe_index_parallel(games, index, observers, out, cfg, wild, totals) -> None:
    n = cfg[CFG_NUM_PLAYERS]
    cards = cfg[CFG_CARDS]
    for i in prange(index.shape[0]):
        observe_into(games[index[i]], observers[i], out[i], n, wild, totals, cards)


# ---------------------------------------------------------------------- invariants

# ``violation`` codes (0: none); VIOLATIONS in batch.py names them.
(
    V_ABSENT_CARD,
    V_NOT_A_CARD,
    V_NATURAL_SLOT,
    V_WILD_UP,
    V_LAYOUT_SIZE,
    V_GAP,
    V_DOWN_COUNT,
    V_CARDS,
    V_HIDDEN,
    V_NO_DECISION,
    V_NO_LEGAL_ACTION,
    V_PILES,
    V_REFUSED,
) = range(1, 14)


@njit(cache=True)
def violation(r, cfg, wild, totals) -> int:
    """``Game.check_invariants`` for one game: 0, or the code of the first rule it breaks."""
    n = cfg[CFG_NUM_PLAYERS]
    if r.nstock < 0 or r.ndiscard < 0 or r.nstock + r.ndiscard > cfg[CFG_CARDS]:
        return V_PILES
    counts = np.zeros(NUM_RANKS, np.int64)
    hidden = np.zeros(NUM_RANKS, np.int64)
    for k in range(r.nstock):
        card = r.stock[k]
        if card < 0 or card >= NUM_RANKS:
            return V_NOT_A_CARD
        counts[card] += 1
        hidden[card] += 1
    for k in range(r.ndiscard):
        card = r.discard[k]
        if card < 0 or card >= NUM_RANKS:
            return V_NOT_A_CARD
        counts[card] += 1
    if r.held >= NUM_RANKS:
        return V_NOT_A_CARD
    if r.held >= 0:
        counts[r.held] += 1
    for p in range(n):
        down = 0
        in_layout = 0
        for s in range(NUM_SLOTS):
            card = r.layout[p, s]
            st = r.state[p, s]
            if st == ABSENT:
                if card != -1:
                    return V_ABSENT_CARD
                continue
            in_layout += 1
            if card < 0 or card >= NUM_RANKS:
                return V_NOT_A_CARD
            counts[card] += 1
            if st == DOWN:
                down += 1
                hidden[card] += 1
            elif st == NATURAL:
                if card != s + 1:
                    return V_NATURAL_SLOT
            elif not wild[card]:
                return V_WILD_UP
        # Once the game is over the sizes already hold the next round's layout size.
        if not r.done and in_layout != r.sizes[p]:
            return V_LAYOUT_SIZE
        for s in range(in_layout):
            if r.state[p, s] == ABSENT:
                return V_GAP
        if down != r.face_down[p]:
            return V_DOWN_COUNT
    for c in range(NUM_RANKS):
        if counts[c] != totals[c]:
            return V_CARDS
        if hidden[c] != r.hidden[c]:
            return V_HIDDEN
    if not r.done:
        d = r.decision
        if d == NONE:
            return V_NO_DECISION
        if d == WILD and r.face_down[r.current] == 0:
            return V_NO_LEGAL_ACTION
        if d == SWAP and not (
            1 <= r.held <= r.sizes[r.current] and r.state[r.current, r.held - 1] == WILD_UP
        ):
            return V_NO_LEGAL_ACTION
    return 0


@njit(cache=True)
def _batch_violations(games, out, cfg, wild, totals) -> None:
    for g in range(games.shape[0]):
        out[g] = violation(games[g], cfg, wild, totals)


@njit(cache=True, parallel=True)
def _batch_violations_parallel(games, out, cfg, wild, totals) -> None:
    for g in prange(games.shape[0]):
        out[g] = violation(games[g], cfg, wild, totals)


@njit(cache=True)
def _batch_soak(games, orngs, out, cfg, wild, deck, totals) -> None:
    """Play every game to its end with uniform random legal engine actions (drawn from
    ``orngs[g]``), checking the invariants after every decision. ``out[g]``: the decisions
    played and 0, or the code of the first violation (``V_REFUSED``: a legal action was
    refused), where that game stops."""
    for g in range(games.shape[0]):
        soak_game(games[g], orngs[g], out[g], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_soak_parallel(games, orngs, out, cfg, wild, deck, totals) -> None:
    for g in prange(games.shape[0]):
        soak_game(games[g], orngs[g], out[g], cfg, wild, deck, totals)


@njit(cache=True)
def soak_game(r, orng, out, cfg, wild, deck, totals) -> None:
    """``batch_soak`` for one game: ``out`` = [decisions played, violation code]."""
    code = violation(r, cfg, wild, totals)
    decisions = 0
    while code == 0 and not r.done:
        if not step(r, random_engine_action(r, orng), cfg, wild, deck, totals):
            code = V_REFUSED
            break
        decisions += 1
        code = violation(r, cfg, wild, totals)
    out[0] = decisions
    out[1] = code


# ---------------------------------------------------------------------- bots

BOT_LEARNER, BOT_RANDOM, BOT_GREEDY, BOT_COUNTING, BOT_POLICY = 0, 1, 2, 3, 4


@njit(cache=True)
def fits(r, player, card, wild) -> bool:
    """``agents.bots.heuristics.fits``: would ``card`` be placed at once in ``player``'s layout?"""
    if card < 0:
        return False
    size = r.sizes[player]
    if wild[card]:
        for s in range(size):
            if r.state[player, s] == DOWN:
                return True
        return False
    return 1 <= card <= size and (
        r.state[player, card - 1] == DOWN or r.state[player, card - 1] == WILD_UP
    )


@njit(cache=True)
def natural_supply(r, me, rank, weight, n) -> float:
    """``agents.bots.heuristics.natural_supply`` for the acting seat ``me``."""
    hidden = r.hidden[rank]
    buried = 0
    for k in range(r.ndiscard - 1):
        if r.discard[k] == rank:
            buried += 1
    rivals = 0
    for p in range(n):
        if p != me and rank <= r.sizes[p]:
            st = r.state[p, rank - 1]
            if st == DOWN or st == WILD_UP:
                rivals += 1
    return (hidden + weight * buried) / (1 + rivals)


@njit(cache=True)
def bot_action(r, kind, weight, orng, wild, n) -> int:
    """The move of a built-in bot (random, greedy, counting) for the player to act."""
    me = r.current
    d = r.decision
    if d == CALL:
        return CALL_TRASH
    if kind == BOT_RANDOM:
        legal = np.empty(NUM_ACTIONS, np.int64)
        count = 0
        if d == DRAW:
            legal[0] = DRAW_STOCK
            legal[1] = TAKE_DISCARD
            count = 2
        elif d == WILD:
            for s in range(r.sizes[me]):
                if r.state[me, s] == DOWN:
                    legal[count] = s
                    count += 1
        else:
            legal[0] = r.held - 1
            legal[1] = DECLINE
            count = 2
        return legal[integers(orng, count)]
    if d == DRAW:
        top = r.discard[r.ndiscard - 1] if r.ndiscard > 0 else -1
        return TAKE_DISCARD if fits(r, me, top, wild) else DRAW_STOCK
    if d == SWAP:
        return r.held - 1
    # WILD: greedy lays it on the highest face-down slot; counting on the slot whose natural
    # card is least likely to come, ties to the highest slot.
    best = -1
    best_score = 0.0
    for s in range(r.sizes[me] - 1, -1, -1):
        if r.state[me, s] != DOWN:
            continue
        if kind == BOT_GREEDY:
            return s
        score = natural_supply(r, me, s + 1, weight, n)
        if best < 0 or score < best_score:
            best = s
            best_score = score
    return best


@njit(cache=True)
def random_engine_action(r, orng) -> int | np.int64:  # int64 inside numba either way
    """A uniform choice among ``Game.legal_actions()`` (the call decision included)."""
    d = r.decision
    if d == CALL:
        return CALL_TRASH if integers(orng, 2) == 0 else STAY_SILENT
    if d == WILD:
        me = r.current
        count = 0
        for s in range(r.sizes[me]):
            if r.state[me, s] == DOWN:
                count += 1
        k = integers(orng, count)
        for s in range(r.sizes[me]):
            if r.state[me, s] == DOWN:
                if k == 0:
                    return s
                k -= 1
    pick = integers(orng, 2)
    if d == DRAW:
        return DRAW_STOCK + pick
    return r.held - 1 if pick == 0 else DECLINE


@njit(cache=True)
def _batch_random_actions(games, orngs, out) -> None:
    """Uniform random legal engine actions for every running game (benchmarks, tests)."""
    for g in range(games.shape[0]):
        r = games[g]
        out[g] = -1 if r.done else random_engine_action(r, orngs[g])


@njit(cache=True, parallel=True)
def _batch_random_actions_parallel(games, orngs, out) -> None:
    for g in prange(games.shape[0]):
        r = games[g]
        out[g] = -1 if r.done else random_engine_action(r, orngs[g])


@njit(cache=True)
def _batch_advance(games, index, kinds, weights, orngs, learner, cfg, wild, deck, totals) -> None:
    """Answer calls and play the built-in bots in the games ``index`` until the learner
    (``learner[g]``) decides, a policy seat must act (``kinds == BOT_POLICY``: the caller runs
    the network) or the game ends (``TrashSoloEnv._advance``)."""
    for i in range(index.shape[0]):
        g = index[i]
        advance_game(games[g], kinds[g], weights[g], orngs[g], learner[g], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_advance_parallel(
    games, index, kinds, weights, orngs, learner, cfg, wild, deck, totals
) -> None:
    for i in prange(index.shape[0]):
        g = index[i]
        advance_game(games[g], kinds[g], weights[g], orngs[g], learner[g], cfg, wild, deck, totals)


@njit(cache=True)
def advance_game(r, kinds, weights, orng, learner, cfg, wild, deck, totals) -> None:
    """``batch_advance`` for one game: ``kinds``/``weights`` per seat, one bot stream."""
    n = cfg[CFG_NUM_PLAYERS]
    while not r.done:
        if r.decision == CALL:
            step(r, CALL_TRASH, cfg, wild, deck, totals)
            continue
        p = r.current
        if p == learner:
            break
        kind = kinds[p]
        if kind == BOT_POLICY:
            break
        step(r, bot_action(r, kind, weights[p], orng, wild, n), cfg, wild, deck, totals)


# ---------------------------------------------------------------------- tournaments


@njit(cache=True)
def seat_action(r, kinds, weights, orngs, wild, n) -> int:
    """The action of the seat to act in a tournament game (per seat: ``kinds`` a bot kind,
    ``weights`` its counting weight, ``orngs`` its own stream, as each seat's agent has its
    own generator); ``CALL_TRASH`` for a call, as every table answers it; -1 where a policy
    seat must act (the caller runs its network)."""
    if r.decision == CALL:
        return CALL_TRASH
    p = r.current
    kind = kinds[p]
    if kind == BOT_POLICY or kind == BOT_LEARNER:
        return -1
    return bot_action(r, kind, weights[p], orngs[p], wild, n)


@njit(cache=True)
def play_seats(r, kinds, weights, orngs, cfg, wild, deck, totals) -> None:
    """Play a tournament game's built-in bots (and answer calls) until a policy seat must act
    or the game ends."""
    n = cfg[CFG_NUM_PLAYERS]
    while not r.done:
        action = seat_action(r, kinds, weights, orngs, wild, n)
        if action < 0:
            return
        step(r, action, cfg, wild, deck, totals)


@njit(cache=True)
def _batch_play_seats(games, index, kinds, weights, orngs, cfg, wild, deck, totals) -> None:
    """``play_seats`` in the games ``index`` (``kinds[g]``, ``weights[g]``, ``orngs[g]``:
    game ``g``'s seats)."""
    for i in range(index.shape[0]):
        g = index[i]
        play_seats(games[g], kinds[g], weights[g], orngs[g], cfg, wild, deck, totals)


@njit(cache=True, parallel=True)
def _batch_play_seats_parallel(games, index, kinds, weights, orngs, cfg, wild, deck, totals):
    for i in prange(index.shape[0]):
        g = index[i]
        play_seats(games[g], kinds[g], weights[g], orngs[g], cfg, wild, deck, totals)


@njit(cache=True)
def batch_seat_actions(games, index, kinds, weights, orngs, out, cfg, wild) -> None:
    """``seat_action`` in the games ``index`` (one decision each, for callers that record
    every action)."""
    n = cfg[CFG_NUM_PLAYERS]
    for i in range(index.shape[0]):
        g = index[i]
        out[i] = seat_action(games[g], kinds[g], weights[g], orngs[g], wild, n)


@njit(cache=True)
def batch_seed_streams(seeds, out) -> None:
    """``out[k]`` = the stream ``numpy.random.default_rng(seeds[k])`` starts with (each seat's
    agent generator, reseeded per game)."""
    for k in range(seeds.shape[0]):
        seed_words(seeds[k], out[k])


# ---------------------------------------------------------------------- dispatch

# From this many games on, a kernel runs its games on every core (numba's ``prange``; each
# game is stepped by one thread from its own state and stream, so the results are the same
# bit for bit). Below it the threads' start-up costs more than it saves (docs/vector.md).
PARALLEL_MIN_GAMES = 512


class Kernel:
    """A batch kernel in its two compiled forms: ``parallel`` (every core) for batches of
    ``PARALLEL_MIN_GAMES`` games or more, ``serial`` below; ``parallel=True``/``False`` forces
    one. The games counted are the first argument's, or the index's (``size_arg=1``)."""

    def __init__(self, serial: Any, parallel: Any, size_arg: int = 0) -> None:
        self.serial = serial
        self.parallel = parallel
        self.size_arg = size_arg
        self.__doc__ = serial.__doc__

    def __call__(self, *args: Any, parallel: bool | None = None) -> Any:
        if parallel is None:
            parallel = args[self.size_arg].shape[0] >= PARALLEL_MIN_GAMES
        if not parallel:
            return self.serial(*args)
        with PARALLEL_LOCK:  # numba's workqueue layer takes one launch at a time
            return self.parallel(*args)


batch_new_games = Kernel(_batch_new_games, _batch_new_games_parallel, 1)
batch_step = Kernel(_batch_step, _batch_step_parallel)
batch_step_autoreset = Kernel(_batch_step_autoreset, _batch_step_autoreset_parallel)
batch_step_index = Kernel(_batch_step_index, _batch_step_index_parallel, 1)
batch_masks = Kernel(_batch_masks, _batch_masks_parallel)
batch_masks_index = Kernel(_batch_masks_index, _batch_masks_index_parallel, 1)
batch_observe = Kernel(_batch_observe, _batch_observe_parallel)
batch_observe_index = Kernel(_batch_observe_index, _batch_observe_index_parallel, 1)
batch_violations = Kernel(_batch_violations, _batch_violations_parallel)
batch_soak = Kernel(_batch_soak, _batch_soak_parallel)
batch_random_actions = Kernel(_batch_random_actions, _batch_random_actions_parallel)
batch_advance = Kernel(_batch_advance, _batch_advance_parallel, 1)
batch_play_seats = Kernel(_batch_play_seats, _batch_play_seats_parallel, 1)
