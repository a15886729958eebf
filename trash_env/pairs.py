"""The ``pairs`` observation: the plain observation with 108 products of its own entries
appended, the conjunctions that decide nearly every move.

Why: in Trash a card of rank r belongs in slot r, so most decisions turn on "the card on offer
has rank r *and* my slot r is still open" (or "the card is wild"). The plain observation
(:mod:`trash_env.observation`) holds the rank and the slot's state as separate one-hots, and a
plain network learns each product only slowly from a noisy game result (the figures are in
docs/environment.md, "The pairs observation").

==========================  =====  ===============================================================
entry                       width  meaning
==========================  =====  ===============================================================
discard top x my slots      40     for slot r (ranks A..10) and each of its 4 states: 1 when the
                                   discard top has rank r and my slot r is in that state
held card x my slots        40     the same for the card in hand
discard top x wild ranks    14     1 where the discard top's rank is wild under these rules
held card x wild ranks      14     the same for the card in hand
==========================  =====  ===============================================================

Every entry is the product of two entries of the observer's own plain observation, so it is
public information exactly as the observation is. This is the one definition: the envs'
``observation="pairs"`` option and the agents' ``pairs`` network features
(agents/policies/features.py) both use :func:`pair_indices`.

``fits`` (the envs' ``observation="fits"``, the agents' ``fits`` features) appends two more
entries after the 108: "the discard top fits my layout" and "the card in hand fits my layout",
exactly ``greedy``'s test (a natural card whose slot is face-down or holds a wild, or a wild
card while a slot of mine is face-down). Each is a sum of ``pairs`` entries (the wild part
times "a slot is face-down"), so it is public too; summed over the ranks it is one input that
every rank trains, which six players need (docs/training.md, "Six players").
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import DOWN, WILD_UP
from trash_env.observation import SEAT_FEATURES, SLOT_FEATURES, observation_size

# the envs' ``observation`` option; the first is the default
OBSERVATIONS = ("plain", "pairs", "fits")
# the forms of the JAX env and the OpenSpiel game, which do not append the fit entries
PAIRS_ONLY = ("plain", "pairs")
PAIR_FEATURES = 2 * NUM_SLOTS * SLOT_FEATURES + 2 * NUM_RANKS  # 108
FIT_FEATURES = 2  # the discard top fits, the card in hand fits

# "face-down left" of the observer's own seat: the third entry after its slots (observation.py)
_FACE_DOWN_LEFT = NUM_SLOTS * SLOT_FEATURES + 2
_CARD_BLOCK = NUM_SLOTS * SLOT_FEATURES  # pairs entries per card (discard top, held card)
_WILD_START = 2 * _CARD_BLOCK  # then "card x wild ranks", NUM_RANKS entries per card

_RANK_WIDTH = NUM_RANKS + 1  # one-hot rank plus "none"


@cache
def _indices(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    start = num_players * SEAT_FEATURES  # the discard top's one-hot
    discard, held = start, start + _RANK_WIDTH
    wild = held + _RANK_WIDTH + NUM_RANKS  # after the visible-per-rank block
    left: list[int] = []
    right: list[int] = []
    for card in (discard, held):
        for slot in range(NUM_SLOTS):  # slot 0 takes rank 1 (the ace)
            for state in range(SLOT_FEATURES):
                left.append(card + slot + 1)
                right.append(slot * SLOT_FEATURES + state)  # the observer's own slots
    for card in (discard, held):
        for rank in range(NUM_RANKS):
            left.append(card + rank)
            right.append(wild + rank)
    pair = (np.array(left, np.int64), np.array(right, np.int64))
    for table in pair:
        table.flags.writeable = False  # cached and shared
    return pair


def pair_indices(num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """The two plain-observation indices multiplied for each ``pairs`` entry, in the table's
    order (``num_players`` fixes where the global entries start). Fresh copies: the caller
    may keep or hand them on (torch warns about read-only arrays)."""
    left, right = _indices(int(num_players))
    return left.copy(), right.copy()


def fit_entries() -> tuple[np.ndarray, np.ndarray]:
    """For the discard top (row 0) and the held card (row 1): the ``pairs`` entries "the card
    has rank r and my slot r is face-down, or holds a wild" (``slots``, 20 a row) and "the card
    is wild" (``wilds``, 14 a row). A card fits when one of its ``slots`` entries is 1, or one
    of its ``wilds`` entries is 1 while a slot of mine is face-down."""
    fitting = [
        slot * SLOT_FEATURES + state for slot in range(NUM_SLOTS) for state in (DOWN, WILD_UP)
    ]
    slots = np.array([[card * _CARD_BLOCK + e for e in fitting] for card in (0, 1)], np.int64)
    wilds = np.array(
        [[_WILD_START + card * NUM_RANKS + rank for rank in range(NUM_RANKS)] for card in (0, 1)],
        np.int64,
    )
    return slots, wilds


def fit_columns(x: Any, pairs: Any, slots: Any, wilds: Any) -> Any:
    """The two fit entries (last axis) of plain observations ``x`` whose ``pairs`` entries
    are ``pairs``, with :func:`fit_entries`' tables: written once for NumPy, torch (the tables
    as tensors) and JAX arrays alike."""
    down = x[..., _FACE_DOWN_LEFT] > 0
    return pairs[..., slots].sum(-1) + pairs[..., wilds].sum(-1) * down[..., None]


def check_observation(observation: object, allowed: tuple[str, ...] = OBSERVATIONS) -> str:
    """``observation`` as a Python ``str`` of ``allowed`` (default :data:`OBSERVATIONS`; numpy
    strings too), or a ``ValueError`` naming the option and the allowed values."""
    if isinstance(observation, (str, np.str_)) and str(observation) in allowed:
        return str(observation)
    raise ValueError(
        f"observation must be one of {', '.join(map(repr, allowed))}, got {observation!r}"
    )


def observation_width(num_players: int, observation: str = "plain") -> int:
    """The length of an ``observation`` vector with ``num_players`` players."""
    form = check_observation(observation)
    extra = {"plain": 0, "pairs": PAIR_FEATURES, "fits": PAIR_FEATURES + FIT_FEATURES}[form]
    return observation_size(num_players) + extra


def add_pairs(plain: np.ndarray, num_players: int) -> np.ndarray:
    """``plain`` observation(s) (shape ``(..., observation_size(n))``) with the ``pairs``
    entries appended along the last axis; a new float32 array."""
    left, right = _indices(int(num_players))
    return np.concatenate([plain, plain[..., left] * plain[..., right]], axis=-1)


def add_fits(plain: np.ndarray, num_players: int) -> np.ndarray:
    """``plain`` observation(s) with the ``pairs`` entries and then the two fit entries
    appended along the last axis; a new array of ``plain``'s dtype."""
    left, right = _indices(int(num_players))
    pairs = plain[..., left] * plain[..., right]
    fit = fit_columns(plain, pairs, *_fit_tables()).astype(plain.dtype)
    return np.concatenate([plain, pairs, fit], axis=-1)


def extend(plain: np.ndarray, num_players: int, observation: str) -> np.ndarray:
    """``plain`` observation(s) in the ``observation`` form (``plain`` itself for "plain")."""
    if observation == "pairs":
        return add_pairs(plain, num_players)
    if observation == "fits":
        return add_fits(plain, num_players)
    return plain


@cache
def _fit_tables() -> tuple[np.ndarray, np.ndarray]:
    tables = fit_entries()
    for table in tables:
        table.flags.writeable = False  # cached and shared
    return tables
