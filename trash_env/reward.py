"""The reward, assembled once for every table that pays: the AEC env and the single-agent env
(through :class:`trash_env.match.Match`), the batched engine (``VectorGame.payments``) and the
batched envs.

A payment is every seat's reward since the last one: with ``round_rewards`` the finished deals'
shares (:func:`deal_shares`), plus, once the game is over and not truncated,
``Game.returns()`` (:func:`add_payments` sums them, the deals first). A learner's reward is its
seat's payment, plus what was paid before its first decision (a deal an opponent ended while the
episode was dealt), or :data:`ILLEGAL_REWARD` when its action was illegal
(:func:`learner_reward`). The compiled kernels sum the deals' shares in the step itself
(``trash_env/vector/_kernels.py``'s ``deal_reward``, their copy of :func:`deal_shares`, since
numba cannot call it); ``tests/test_reward.py`` holds the two equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from trash_env.engine import Game

ILLEGAL_REWARD = -1  # the reward of an illegal action: it ends the episode (PettingZoo's too)

# A payment: a list of one game's seats, an array of a batch's, or one seat's float.
Payment = Any


def deal_shares(game: Game, first: int) -> list[float]:
    """Every seat's shares (``Game.shares_to_returns``) of the deals ``first`` onwards that
    have finished, summed deal by deal."""
    results, n = game.round_results, game.num_players
    paid = [0.0] * n
    for deal in range(first, len(results)):
        shares = game.shares_to_returns(results[deal])
        for p in range(n):
            paid[p] += shares[p]
    return paid


def add_payments(first: Payment, second: Payment) -> Payment:
    """``first`` plus ``second`` (``None``: nothing paid), seat by seat: lists of one game's
    seats, arrays of a batch's, or one seat's floats."""
    if first is None:
        return second
    if second is None:
        return first
    if isinstance(first, list):
        return [a + b for a, b in zip(first, second, strict=True)]
    return first + second


def learner_reward(paid: Payment, illegal: bool | np.ndarray) -> Payment:
    """A learner's reward for its step: what it was paid, or :data:`ILLEGAL_REWARD` where its
    action was illegal (it forfeits the episode); floats, or arrays over a batch."""
    if isinstance(illegal, np.ndarray):
        return np.where(illegal, float(ILLEGAL_REWARD), paid)
    return float(ILLEGAL_REWARD) if illegal else paid
