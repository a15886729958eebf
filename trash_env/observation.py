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

import numpy as np

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import DOWN, NUM_ACTIONS, NUM_DECISIONS, Game

OBS_VERSION = 1
SLOT_FEATURES = 4
SEAT_FEATURES = NUM_SLOTS * SLOT_FEATURES + 4
GLOBAL_FEATURES = (NUM_RANKS + 1) * 2 + NUM_RANKS * 2 + NUM_DECISIONS + 2


def observation_size(num_players: int) -> int:
    return SEAT_FEATURES * num_players + GLOBAL_FEATURES


def state_size(num_players: int) -> int:
    return observation_size(num_players) + num_players * NUM_SLOTS * (NUM_RANKS + 1) + NUM_RANKS


def encode_observation(game: Game, observer: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of seat ``observer``: a function of public information only."""
    n = game.num_players
    obs = np.zeros(observation_size(n), np.float32) if out is None else out
    if out is not None:
        obs[:] = 0.0
    hot = []
    acting = -1 if game.done else game.current
    for k in range(n):
        p = (observer + k) % n
        base = k * SEAT_FEATURES
        state = game.state[p]
        for s in range(NUM_SLOTS):
            hot.append(base + s * SLOT_FEATURES + state[s])
        tail = base + NUM_SLOTS * SLOT_FEATURES
        obs[tail] = game.sizes[p] / NUM_SLOTS
        obs[tail + 1] = game.rounds_won[p] / NUM_SLOTS
        obs[tail + 2] = game.face_down_count(p) / NUM_SLOTS
        if p == acting:
            hot.append(tail + 3)
    g = n * SEAT_FEATURES
    hot.append(g + (game.discard[-1] if game.discard else NUM_RANKS))
    g += NUM_RANKS + 1
    hot.append(g + (game.held if game.held >= 0 else NUM_RANKS))
    g += NUM_RANKS + 1
    hidden = game.hidden_counts()
    for rank, total in enumerate(game.totals):
        if total:
            obs[g + rank] = (total - hidden[rank]) / total
    g += NUM_RANKS
    for rank, wild in enumerate(game.wild):
        if wild:
            hot.append(g + rank)
    g += NUM_RANKS
    hot.append(g + int(game.decision))
    g += NUM_DECISIONS
    cards = game.rules.total_cards
    obs[g] = len(game.stock) / cards
    obs[g + 1] = len(game.discard) / cards
    obs[hot] = 1.0
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


def action_mask(game: Game, player: int, out: np.ndarray | None = None) -> np.ndarray:
    """int8 mask over the env's 13 actions: the legal actions of ``player`` if it is to act,
    else all zero. A call decision is never surfaced to agents (see the env)."""
    mask = np.zeros(NUM_ACTIONS, np.int8) if out is None else out
    if out is not None:
        mask[:] = 0
    if not game.done and game.current == player:
        for action in game.legal_actions():
            if action < NUM_ACTIONS:
                mask[action] = 1
    return mask
