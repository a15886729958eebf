"""Observation vectors: what one seat may know, as a fixed-size float32 vector.

Built from public information alone (RULES.md, "Information"): face-up cards, the discard pile,
stock size, layout sizes, rounds won, the held card and the decision. Face-down cards and the
stock order never enter :func:`encode_observation`; :func:`encode_state` (for centralised
critics) adds them on purpose and is never given to an acting agent.

Layout (``OBS_VERSION`` 1), with ``n`` players, seats ordered from the observer onwards in
turn order:

==========================  =======  =========================================================
feature                     width    meaning
==========================  =======  =========================================================
per seat: slots             10 x 4   one-hot per slot: face-down, natural face-up, wild
                                     face-up, not in layout
per seat: layout size       1        size / 10
per seat: rounds won        1        rounds won / 10
per seat: face-down left    1        face-down slots / 10
per seat: to act            1        1 for the seat whose decision it is
discard top                 15       one-hot rank (joker, A..K), last = pile empty
held card                   15       one-hot rank, last = no card in hand
visible per rank            14       face-up, discarded or held cards of each rank / decks' count
wild ranks                  14       1 where the rank is wild under these rules
decision                    5        one-hot: none, draw, wild target, swap, call
stock size                  1        cards in stock / cards in the decks
discard size                1        cards in the discard pile / cards in the decks
==========================  =======  =========================================================
"""

from __future__ import annotations

from operator import add, getitem

import numpy as np

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import (
    DOWN,
    DRAW_STOCK,
    NUM_ACTIONS,
    NUM_DECISIONS,
    TAKE_DISCARD,
    Decision,
    Game,
)
from trash_env.rules import MAX_PLAYERS, MIN_PLAYERS

OBS_VERSION = 1
SLOT_FEATURES = 4
SEAT_FEATURES = NUM_SLOTS * SLOT_FEATURES + 4
GLOBAL_FEATURES = (NUM_RANKS + 1) * 2 + NUM_RANKS * 2 + NUM_DECISIONS + 2


def observation_size(num_players: int) -> int:
    return SEAT_FEATURES * num_players + GLOBAL_FEATURES


def state_size(num_players: int) -> int:
    return observation_size(num_players) + num_players * NUM_SLOTS * (NUM_RANKS + 1) + NUM_RANKS


class _Layout:
    """Index tables of the observation for one number of players, built once (``_layout``):
    where each seat's features start, seen from each observer, and where the scalar features
    go, in the order :func:`encode_observation` lists their values."""

    def __init__(self, n: int) -> None:
        self.size = observation_size(n)
        seats = [
            (k * SEAT_FEATURES, [k * SEAT_FEATURES + s * SLOT_FEATURES for s in range(NUM_SLOTS)])
            for k in range(n)
        ]
        # views[observer] = [(player, slot one-hot offsets, acting flag index), ...]
        self.views = [
            [
                ((observer + k) % n, seats[k][1], seats[k][0] + NUM_SLOTS * SLOT_FEATURES + 3)
                for k in range(n)
            ]
            for observer in range(n)
        ]
        g = n * SEAT_FEATURES
        self.discard_top = g
        self.held = g + NUM_RANKS + 1
        visible = self.held + NUM_RANKS + 1
        self.wild = visible + NUM_RANKS
        self.decision = self.wild + NUM_RANKS
        stock = self.decision + NUM_DECISIONS
        tails = [k * SEAT_FEATURES + NUM_SLOTS * SLOT_FEATURES for k in range(n)]
        scalars = [t + i for t in tails for i in range(3)]
        scalars += [visible + rank for rank in range(NUM_RANKS)] + [stock, stock + 1]
        self.scalars = np.array(scalars, np.intp)
        # Everything encode_observation needs, in one tuple (one unpack, no attribute reads).
        self.fields = (
            self.size,
            self.views,
            self.discard_top,
            self.held,
            self.decision,
            self.scalars,
        )


_LAYOUTS = {n: _Layout(n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
_RULES_TABLES: dict[tuple, tuple[list[int], list[list[float]], int]] = {}
# The last game's wild table and rank totals (held here, so never recycled) and their tables:
# one identity test instead of building a key on most calls. Clones share these objects. One
# tuple, read once and replaced whole, so that threads never mix two games' entries.
_last: tuple = (None, None, None)


def _rules_tables(game: Game, layout: _Layout) -> tuple[list[int], list[list[float]], int]:
    """Per rules (cached): the wild-rank one-hot positions, per rank a table from the number
    of hidden cards to the visible share ``(total - hidden) / total``, and the cards in play."""
    global _last
    last = _last
    if last[0] is game.wild and last[1] is game.totals:
        return last[2]
    key = (layout.size, game.wild, tuple(game.totals))
    tables = _RULES_TABLES.get(key)
    if tables is None:
        wild_hot = [layout.wild + rank for rank, wild in enumerate(game.wild) if wild]
        shares = [
            [(total - h) / total for h in range(total + 1)] if total else [0.0]
            for total in game.totals
        ]
        tables = _RULES_TABLES[key] = (wild_hot, shares, sum(game.totals))
    _last = (game.wild, game.totals, tables)
    return tables


def encode_observation(game: Game, observer: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of seat ``observer``: a function of public information only.

    Hot path (once per env step): Python collects the one-hot positions and the scalar
    values using the index tables of :class:`_Layout`, then two numpy calls write them."""
    layout = _LAYOUTS[game.num_players]
    size, views, discard_top, held_at, decision_at, scalars = layout.fields
    if out is None:
        obs = np.zeros(size, np.float32)
    else:
        obs = out
        obs.fill(0.0)
    wild_hot, shares, cards = _rules_tables(game, layout)
    hot = wild_hot[:]
    values = []
    acting = -1 if game.done else game._current
    # Game's own lists, read directly on this hot path (face_down_count() and hidden_counts()
    # give the same public counts through a call and a copy).
    states, sizes, won, down = game.state, game.sizes, game.rounds_won, game._down
    for p, slot_offsets, acting_at in views[observer]:
        hot += map(add, slot_offsets, states[p])
        if p == acting:
            hot.append(acting_at)
        values += (
            sizes[p] / NUM_SLOTS,
            won[p] / NUM_SLOTS,
            down[p] / NUM_SLOTS,
        )
    discard = game.discard
    held = game.held
    hot += (
        discard_top + (discard[-1] if discard else NUM_RANKS),
        held_at + (held if held >= 0 else NUM_RANKS),
        decision_at + game.decision,
    )
    values += map(getitem, shares, game._hidden)
    values.append(len(game.stock) / cards)
    values.append(len(discard) / cards)
    obs[np.fromiter(hot, np.intp, len(hot))] = 1.0
    obs[scalars] = np.fromiter(values, np.float32, len(values))
    return obs


def encode_state(game: Game) -> np.ndarray:
    """The full state for centralised critics: seat 0's observation plus every face-down card
    (one-hot rank per slot, last = not face-down) and the stock's rank counts. Hidden
    information: never hand this to an acting agent."""
    n = game.num_players
    out = np.zeros(state_size(n), np.float32)
    encode_observation(game, 0, out[: observation_size(n)])
    base = observation_size(n)
    hot = []
    for p in range(n):
        for s in range(NUM_SLOTS):
            rank = game.layout[p][s] if game.state[p][s] == DOWN else NUM_RANKS
            hot.append(base + (p * NUM_SLOTS + s) * (NUM_RANKS + 1) + rank)
    out[hot] = 1.0
    base += n * NUM_SLOTS * (NUM_RANKS + 1)
    cards = game.rules.total_cards
    for card in game.stock:
        out[base + card] += 1.0 / cards
    return out


_DRAW = Decision.DRAW
_DRAW_MASK = np.zeros(NUM_ACTIONS, np.int8)
_DRAW_MASK[[DRAW_STOCK, TAKE_DISCARD]] = 1


def action_mask(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over the env's 13 actions: the legal actions of ``player`` if it is to act,
    else all zero. A call decision is never surfaced to agents (see the env)."""
    if out is None and game.decision is _DRAW and game.current == player:
        return _DRAW_MASK.copy()  # most decisions: a copy is cheaper than zeros and two stores
    mask = np.zeros(NUM_ACTIONS, np.int8) if out is None else out
    if out is not None:
        mask[:] = 0
    if not game.done and game.current == player:
        for action in game.legal_actions():
            if action < NUM_ACTIONS:
                mask[action] = 1
    return mask
