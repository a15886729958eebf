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
"""

from __future__ import annotations

from functools import cache

import numpy as np

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.observation import SEAT_FEATURES, SLOT_FEATURES, observation_size

OBSERVATIONS = ("plain", "pairs")  # the envs' ``observation`` option; the first is the default
PAIR_FEATURES = 2 * NUM_SLOTS * SLOT_FEATURES + 2 * NUM_RANKS  # 108

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


def check_observation(observation: object) -> str:
    """``observation`` as a Python ``str`` of :data:`OBSERVATIONS` (numpy strings too), or a
    ``ValueError`` naming the option and the allowed values."""
    if isinstance(observation, (str, np.str_)) and str(observation) in OBSERVATIONS:
        return str(observation)
    raise ValueError(
        f"observation must be one of {', '.join(map(repr, OBSERVATIONS))}, got {observation!r}"
    )


def observation_width(num_players: int, observation: str = "plain") -> int:
    """The length of an ``observation`` vector with ``num_players`` players."""
    extra = PAIR_FEATURES if check_observation(observation) == "pairs" else 0
    return observation_size(num_players) + extra


def add_pairs(plain: np.ndarray, num_players: int) -> np.ndarray:
    """``plain`` observation(s) (shape ``(..., observation_size(n))``) with the ``pairs``
    entries appended along the last axis; a new float32 array."""
    left, right = _indices(int(num_players))
    return np.concatenate([plain, plain[..., left] * plain[..., right]], axis=-1)
