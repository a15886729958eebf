"""Observation vectors: what one seat may know, as a fixed-size float32 vector.

Built from public information alone (docs/rules.md, "Information"): face-up cards, the discard pile,
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

from operator import getitem
from typing import NamedTuple

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


def players_of_observation(size: int) -> int | None:
    """The player count whose observations have ``size`` entries (``None``: no count)."""
    if (size - GLOBAL_FEATURES) % SEAT_FEATURES:
        return None
    players = (size - GLOBAL_FEATURES) // SEAT_FEATURES
    return players if MIN_PLAYERS <= players <= MAX_PLAYERS else None


def state_size(num_players: int) -> int:
    return observation_size(num_players) + num_players * NUM_SLOTS * (NUM_RANKS + 1) + NUM_RANKS


_F32 = np.dtype(np.float32)


def _f32(*values: float) -> bytes:
    """The float32 bytes of ``values``, as numpy stores them (native byte order)."""
    return np.array(values, _F32).tobytes()


def _one_hot(width: int, hot: int) -> bytes:
    return _f32(*(float(i == hot) for i in range(width)))


# The observation is built as bytes: every feature group takes few values, so each value's
# float32 bytes are made once here and an encoding is one join of table entries (no per-step
# arithmetic, one numpy call); they save about half of an AEC step's instructions
# (docs/benchmarks-history.md, "The rule book over the tricks"). Tables indexed by the
# engine's integers:
_SLOT = [_one_hot(SLOT_FEATURES, state) for state in range(SLOT_FEATURES)]  # [slot state]
# [layout size][rounds won][face-down left][to act]: a seat's four scalars (counts / 10).
_COUNTS = range(NUM_SLOTS + 1)
_SEAT_TAIL = [
    [
        [
            [_f32(size / NUM_SLOTS, won / NUM_SLOTS, down / NUM_SLOTS, acting) for acting in (0, 1)]
            for down in _COUNTS
        ]
        for won in _COUNTS
    ]
    for size in _COUNTS
]
_RANK = [_one_hot(NUM_RANKS + 1, rank) for rank in range(NUM_RANKS + 1)]  # [rank], 14 = none
_DECISION = [_one_hot(NUM_DECISIONS, d) for d in range(NUM_DECISIONS)]
# [n][observer]: the seats in the order the observation lists them (observer first).
_SEAT_ORDER = {
    n: [[(observer + k) % n for k in range(n)] for observer in range(n)]
    for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)
}


class _RulesTables(NamedTuple):
    wild: bytes  # the wild-ranks feature
    visible: list[list[bytes]]  # [rank][hidden count]: the visible share (total - hidden)/total
    fraction: list[bytes]  # [cards]: cards / the cards in the decks (stock and discard sizes)


_RULES_TABLES: dict[tuple, _RulesTables] = {}
# The last game's wild table and rank totals (held here, so never recycled) and their tables:
# one identity test instead of building a key on most calls. Clones share these objects. One
# tuple, read once and replaced whole, so that threads never mix two games' entries.
_last: tuple = (None, None, None)


def _rules_tables(game: Game) -> _RulesTables:
    """The byte tables that depend on the rules (which ranks are wild, how many of each)."""
    global _last
    last = _last
    if last[0] is game.wild and last[1] is game.totals:
        return last[2]
    key = (game.wild, tuple(game.totals))
    tables = _RULES_TABLES.get(key)
    if tables is None:
        cards = sum(game.totals)
        tables = _RULES_TABLES[key] = _RulesTables(
            wild=_f32(*(float(w) for w in game.wild)),
            visible=[
                [_f32((total - h) / total) for h in range(total + 1)] if total else [_f32(0.0)]
                for total in game.totals
            ],
            fraction=[_f32(k / cards) for k in range(cards + 1)],
        )
    _last = (game.wild, game.totals, tables)
    return tables


_slot_bytes = _SLOT.__getitem__


def encode_observation(game: Game, observer: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of seat ``observer``: a function of public information only.

    Hot path (once per env step): the feature groups' float32 bytes are looked up in the
    tables above, in the order of the layout, and joined; numpy wraps the result once."""
    wild, visible, fraction = _rules_tables(game)
    acting = -1 if game.done else game.current
    # Game's own lists, read directly on this hot path (face_down_count() and hidden_counts()
    # give the same public counts through a call and a copy).
    states, sizes, won, down = game.state, game.sizes, game.rounds_won, game.face_down
    parts: list[bytes] = []
    for p in _SEAT_ORDER[game.num_players][observer]:
        parts += map(_slot_bytes, states[p])
        parts.append(_SEAT_TAIL[sizes[p]][won[p]][down[p]][p == acting])
    discard = game.discard
    held = game.held
    parts.append(_RANK[discard[-1] if discard else NUM_RANKS])
    parts.append(_RANK[held if held >= 0 else NUM_RANKS])
    parts += map(getitem, visible, game.hidden)
    parts.append(wild)
    parts.append(_DECISION[game.decision])
    parts.append(fraction[len(game.stock)])
    parts.append(fraction[len(discard)])
    data = b"".join(parts)
    if out is None:
        return np.frombuffer(bytearray(data), _F32)  # writable: it owns a copy of the bytes
    out[:] = np.frombuffer(data, _F32)
    return out


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
