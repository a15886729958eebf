"""An optional shaped reward for training: progress through the deal, as a potential.

Why: the true reward is a +-1 result decided mostly by the luck of the deal, paid at the end of
a deal or a game, so a learner from a random policy needs millions of steps to find out that
taking a fitting discard (or swapping a wild back) is good. The progress potential makes the
effect of a move visible at the next decision.

The potential of a state, for the learner at ``seat``::

    phi = up(seat) - mean over the opponents q of up(q),   up(p) = (size[p] - down[p]) / size[p]

(``down``: face-down slots left in the current deal; ``size``: the layout size). It is read at
every learner decision, from public counts only (``Game.face_down_count`` and ``Game.sizes``,
or the batched engine's ``down`` and ``size`` arrays). Each learner step is paid
``coef * (phi(next) - phi(previous))`` on top of the true reward, with ``phi = 0`` once the
episode has ended. So the shaping telescopes: over an episode it sums to ``-coef * phi`` of
the first decision (0 unless an opponent moved before it), and over the steps from one deal's
first decision to the next deal's first decision to the difference of those two potentials
(both near 0: a new deal starts face-down). It is a potential-based shaping (Ng, Harada and
Russell, 1999, with discount 1): it moves credit earlier without changing what an episode is
worth. train.py can anneal ``coef`` to 0 (``--shaping-until``) so that the final policy is
trained on the true reward alone. Evaluation never sees it: it lives only in the training envs.

Two implementations of the same formula, checked against each other by the tests: the wrapper
below for ``TrashSoloEnv`` (the dummy/subprocess path) and ``SoloBatch(shaping=...)`` in
:mod:`trash_env.vector.env` (the batched path).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def check_coef(coef: float) -> float:
    """The shaping coefficient, checked: a finite float from 0 to 10."""
    if isinstance(coef, bool) or not isinstance(coef, (int, float, np.floating, np.integer)):
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    value = float(coef)
    if not 0.0 <= value <= 10.0:  # also refuses NaN
        raise ValueError(f"shaping must be a number from 0 to 10, got {coef!r}")
    return value


def progress_potential(sizes: np.ndarray, down: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """phi per game: the learner's face-up fraction minus the opponents' mean.

    ``sizes`` and ``down`` are ``(B, n)`` (layout sizes, face-down slots left), ``seats`` the
    ``(B,)`` learner seats."""
    sizes = np.asarray(sizes, np.float64)
    up = (sizes - np.asarray(down, np.float64)) / np.maximum(sizes, 1.0)
    n = up.shape[1]
    rows = np.arange(up.shape[0])
    mine = up[rows, seats]
    others = (up.sum(axis=1) - mine) / max(n - 1, 1)
    return mine - others


def game_potential(game: Any, seat: int) -> float:
    """phi of a reference ``Game`` for the learner at ``seat`` (0 once the game is over)."""
    if game.done:
        return 0.0
    n = game.num_players
    sizes = np.array([game.sizes], np.float64)
    down = np.array([[game.face_down_count(p) for p in range(n)]], np.float64)
    return float(progress_potential(sizes, down, np.array([seat]))[0])


class ProgressShaping(gym.Wrapper):
    """Adds ``coef * (phi(next) - phi(previous))`` to a ``TrashSoloEnv``'s reward (possibly
    under ``Monitor``, which then keeps recording the true reward).

    ``info["shaping"]`` holds the step's shaping term; on the episode's last step, when a
    ``Monitor`` below wrote ``info["episode"]``, ``info["episode"]["shaping"]`` holds the
    episode's sum. ``set_shaping(coef)`` changes the coefficient (``VecEnv.env_method``)."""

    def __init__(self, env: gym.Env, coef: float = 0.0) -> None:
        super().__init__(env)
        self.coef = check_coef(coef)
        self._phi = 0.0
        self._sum = 0.0

    def set_shaping(self, coef: float) -> None:
        self.coef = check_coef(coef)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (MaskablePPO asks the outermost env)."""
        return self.env.unwrapped.action_masks()

    def _potential(self) -> float:
        solo = self.env.unwrapped
        return game_potential(solo.game, solo.seat)

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self._phi = self._potential()
        self._sum = 0.0
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        phi = 0.0 if terminated or truncated else self._potential()
        term = self.coef * (phi - self._phi)
        self._phi = phi
        self._sum += term
        info["shaping"] = term
        if (terminated or truncated) and isinstance(info.get("episode"), dict):
            info["episode"]["shaping"] = round(self._sum, 6)
        return obs, float(reward) + term, terminated, truncated, info
