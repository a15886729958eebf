"""Checks of a batch's state arrays from outside (a resumed checkpoint) before the compiled
kernels read them: the kernels trust their records (a card value indexes a table, a player
index a row), so a tampered array would read out of bounds, loop for ever or play garbage.

:func:`check_games` checks every field's dtype, shape and value range (cards, slots, sizes,
player indices, pile counts, decisions, rng words), then the invariants of
``Game.check_invariants`` through the kernels' own ``violation`` (safe once the ranges hold);
:func:`check_seats` the per-game seating the batched env keeps beside them. Both raise a
``ValueError`` of one sentence naming the first bad game and field.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from trash_env.cards import NUM_RANKS, NUM_SLOTS
from trash_env.engine import ABSENT, PHASE_FREE_DRAWS, PHASE_PLAY, Decision
from trash_env.rules import Rules
from trash_env.vector import _kernels as K
from trash_env.vector.batch import VIOLATIONS, RulesArrays

BOOLEANS = ("called", "pending_wild", "done", "truncated", "stock_known")
FLAGS = ("pending_claim", "completed", "shrunk", "winners")
BOT_KINDS = (K.BOT_RANDOM, K.BOT_GREEDY, K.BOT_COUNTING, K.BOT_POLICY)


def _ranges(rules: Rules, capacity: int) -> dict[str, tuple[int, int]]:
    """Per field, the lowest and highest value a running batch holds (players' columns)."""
    n, turns = rules.num_players, rules.max_turns
    return {
        "layout": (-1, NUM_RANKS - 1),
        "state": (0, ABSENT),
        "sizes": (0, NUM_SLOTS),
        "rounds_won": (0, 2**15 - 1),
        "face_down": (0, NUM_SLOTS),
        "placings": (0, n),
        "face_down_left": (0, NUM_SLOTS),
        "hidden": (0, 2**15 - 1),
        "nstock": (0, capacity),
        "ndiscard": (0, capacity),
        "held": (-1, NUM_RANKS - 1),
        "current": (0, n - 1),
        "decision": (min(Decision), max(Decision)),
        "phase": (PHASE_PLAY, PHASE_FREE_DRAWS),
        "free_left": (0, rules.free_draws),
        "pending_slot": (-1, NUM_SLOTS - 1),
        "round_winner": (-1, n - 1),
        "round_starter": (0, n - 1),
        "deal_number": (0, 2**31 - 1),
        "turns": (0, turns),
        **{name: (0, 1) for name in FLAGS},
    }


def _fail(rows: np.ndarray, what: str) -> ValueError:
    bad = np.flatnonzero(rows.reshape(len(rows), -1).any(axis=1))
    return ValueError(f"game {int(bad[0])} ({bad.size} of {len(rows)} games) has {what}")


def games_from_fields(fields: Mapping[str, np.ndarray], rules: Rules) -> np.ndarray:
    """The batch's records built from one array per field (as ``VectorGame.games[name]``), every
    field present with its dtype and shape and nothing else; then :func:`check_games`."""
    dtype = RulesArrays(rules).dtype
    if set(fields) != set(dtype.names or ()):
        differ = sorted(set(fields) ^ set(dtype.names or ()))
        raise ValueError(f"the games' fields differ from this version's ({', '.join(differ)})")
    size = len(next(iter(fields.values())))
    games = np.zeros(size, dtype)
    for name, array in fields.items():
        want = dtype.fields[name][0]  # type: ignore[index]
        if array.dtype != want.base or array.shape != (size, *want.shape):
            raise ValueError(f"the games' field {name} is {array.dtype} {array.shape}")
        games[name] = array
    check_games(games, rules)
    return games


def check_games(games: np.ndarray, rules: Rules) -> None:
    """Every game of ``games`` (a batch's records for ``rules``) in range and within the rules'
    invariants; ``ValueError`` naming the first that is not."""
    arrays = RulesArrays(rules)
    if games.dtype != arrays.dtype or games.ndim != 1:
        raise ValueError("the games are not records of this version's layout")
    n, capacity = rules.num_players, arrays.dtype["stock"].shape[0]
    for name in BOOLEANS:  # any byte but 0 and 1 is no bool (numpy does not check)
        if (games[name].view(np.uint8) > 1).any():
            raise _fail(games[name].view(np.uint8) > 1, f"a {name} flag that is not 0 or 1")
    for name, (low, high) in _ranges(rules, capacity).items():
        values = games[name][:, :n] if games[name].ndim > 1 and name != "hidden" else games[name]
        if (values < low).any() or (values > high).any():
            raise _fail((values < low) | (values > high), f"{name} outside {low}..{high}")
        if games[name].ndim > 1 and name != "hidden" and games[name][:, n:].any():
            raise _fail(games[name][:, n:] != 0, f"{name} set for a seat beyond {n} players")
    rewards = games["deal_reward"]
    bad_rewards = ~np.isfinite(rewards) | ((rewards != 0) & (np.arange(rewards.shape[1]) >= n))
    if bad_rewards.any():
        raise _fail(bad_rewards, "a deal reward that is not a number or for no seat")
    if (games["hidden"] > arrays.totals).any():
        raise _fail(games["hidden"] > arrays.totals, "more hidden cards than the decks hold")
    if (games["nstock"].astype(int) + games["ndiscard"] > arrays.cards).any():
        raise _fail(games["nstock"].astype(int) + games["ndiscard"] > arrays.cards, "piles too big")
    # Read by the kernels up to the pile counts only; the rest of each pile is scratch.
    for pile in ("stock", "discard"):
        used = np.arange(capacity) < games[f"n{pile}"][:, None]
        bad = used & ((games[pile] < 0) | (games[pile] >= NUM_RANKS))
        if bad.any():
            raise _fail(bad, f"a {pile} card that is not a card")
    check_rng_words(games["rng"], "game generator")
    if (games["truncated"] & ~games["done"]).any():
        raise _fail(games["truncated"] & ~games["done"], "a truncated game not over")
    codes = np.zeros(len(games), np.int64)
    K.batch_violations(games, codes, arrays.cfg, arrays.wild, arrays.totals)
    if codes.any():
        raise _fail(codes != 0, f"a broken invariant: {VIOLATIONS[int(codes[codes != 0][0]) - 1]}")


def check_rng_words(words: np.ndarray, what: str) -> None:
    """PCG64 states as the kernels hold them (``_pcg``): an odd increment, a buffered half."""
    if words.ndim != 2 or words.shape[1] != 6 or words.dtype != np.uint64:
        raise ValueError(f"the {what} states are not uint64 rows of 6 words")
    bad = (words[:, 3] % 2 == 0) | (words[:, 4] > 1) | (words[:, 5] >= 2**32)
    if bad.any():
        raise _fail(bad, f"a {what} state that is not a PCG64 state")


def check_seats(
    games: np.ndarray,
    seats: np.ndarray,
    kinds: np.ndarray,
    policy_of: np.ndarray,
    policies: int,
    orngs: np.ndarray,
    num_players: int,
) -> None:
    """The seating of a learner batch at rest (between steps): per game, the learner's seat,
    whose turn it is; the other seats' bot kinds, policy indices below ``policies`` exactly
    where a policy sits, and the opponents' generators."""
    n = num_players
    if (seats < 0).any() or (seats >= n).any():
        raise _fail((seats < 0) | (seats >= n), f"a learner seat outside 0..{n - 1}")
    rows = np.arange(len(seats))
    waiting = ~games["done"] & (games["current"] == seats) & (kinds[rows, seats] == K.BOT_LEARNER)
    if not waiting.all():
        raise _fail(~waiting, "no learner decision waiting at the learner's seat")
    others = np.ones(kinds.shape, bool)
    others[rows, seats] = False
    others[:, n:] = False
    bad = others & ~np.isin(kinds, BOT_KINDS)
    bad |= others & ((policy_of >= 0) != (kinds == K.BOT_POLICY))
    bad |= (policy_of >= policies) | (policy_of < -1) | (~others & (policy_of != -1))
    bad |= kinds[:, n:].any(axis=1, keepdims=True)
    if bad.any():
        raise _fail(bad, "a bad opponent seat")
    check_rng_words(orngs, "opponent generator")
