"""An optional shaped reward for training: progress through each deal.

Why: the true reward is a +-1 result decided mostly by the luck of the deal, paid at the end of
a deal or a game, so a learner from a random policy needs millions of steps to find out that
taking a fitting discard (or swapping a wild back) is good. Paying progress as it happens makes
the effect of a move visible at the next decision.

The progress of a deal, for the learner at ``seat``::

    phi = up(seat) - mean over the opponents q of up(q),   up(p) = (size[p] - down[p]) / size[p]

(``down``: face-down slots left in the deal; ``size``: that deal's layout size; public counts
only: ``Game.face_down_count`` / ``Game.sizes`` and the event log, or the batched engine's
``down``, ``size``, ``fdl`` and ``shrunk`` arrays). Each learner step is paid, on top of the
true reward, ``coef`` times the progress made since the previous learner decision:

- within a deal: ``phi(now) - phi(previous decision)``;
- when a deal ended in between: ``phi(that deal's end) - phi(previous decision)``, plus
  ``phi(now)`` of the new deal (a deal starts face-down, at 0) unless the episode is over.

So the shaping telescopes within a deal: over a deal's steps it sums to ``coef`` times the
deal's progress difference at its end (``1 - mean of the opponents' up`` for the player who
went out), and over an episode to the sum of that over its deals. A truncated episode
(``max_turns``) takes back the unfinished deal's progress. When more than one deal ends
between two learner decisions (possible with tiny layouts), the last one's end is used. It is
not a potential-based shaping: it pays for progress, which is what wins deals, so train.py
anneals ``coef`` to 0 (``--shaping-until``) and the final updates see the true reward alone.
Evaluations never see it: it lives only in the training envs.

The formula, the coefficient check, the readers of phi and the rule above
(:class:`~trash_env.progress.ProgressFollower`) live in :mod:`trash_env.progress`, shared by
the wrapper below for ``TrashSoloEnv`` (the dummy/subprocess path) and
``SoloBatch(shaping=...)`` in :mod:`trash_env.vector.env` (the batched path); the tests check
both pay the same rewards.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from trash_env.progress import (
    ProgressFollower,
    check_coef,
    game_potential,
    last_deal_end_potential,
)
from trash_env.solo import TrashSoloEnv

__all__ = ["ProgressShaping"]


class ProgressShaping(gym.Wrapper):
    """Adds the progress shaping (module docstring) to a ``TrashSoloEnv``'s reward (possibly
    under ``Monitor``, which then keeps recording the true reward).

    ``info["shaping"]`` holds the step's shaping term; on the episode's last step, when a
    ``Monitor`` below wrote ``info["episode"]``, ``info["episode"]["shaping"]`` holds the
    episode's sum. ``set_shaping(coef)`` changes the coefficient (``VecEnv.env_method``).
    Progress is followed only while the coefficient is not 0 (at 0 the wrapper costs nothing
    per step); turning it on picks the episode up where a follower from its start would
    stand."""

    def __init__(self, env: gym.Env, coef: float = 0.0) -> None:
        super().__init__(env)
        self.coef = check_coef(coef)
        self._follower = ProgressFollower(1)
        self._sum = 0.0
        self._fresh = True  # no step since the episode started (or it has just ended)

    @property
    def solo(self) -> TrashSoloEnv:
        """The single-agent env under any wrappers (gymnasium types ``unwrapped`` as any Env)."""
        return cast(TrashSoloEnv, self.env.unwrapped)

    def set_shaping(self, coef: float) -> None:
        coef = check_coef(coef)
        if coef and not self.coef:  # what progress() would hold at this decision
            game = self.solo.game
            phi = 0.0 if self._fresh else game_potential(game, self.solo.seat)
            self._follower.pick_up([phi], [game.deal_number], [self._fresh])
        self.coef = coef

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (MaskablePPO asks the outermost env)."""
        return self.solo.action_masks()

    def state_dict(self) -> dict[str, Any]:
        """The shaping's figures in the episode under way, as JSON values: the coefficient,
        the potential and deal its follower stands at, the episode's sum, whether the
        episode has had no step yet."""
        return {
            "coef": float(self.coef),
            "potential": float(self._follower.potential[0]),
            "deals": int(self._follower.deals[0]),
            "sum": float(self._sum),
            "fresh": bool(self._fresh),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """The figures as :meth:`state_dict` gave them (the coefficient checked)."""
        self.coef = check_coef(state["coef"])
        self._follower.potential = np.array([state["potential"]], np.float64)
        self._follower.deals = np.array([state["deals"]], np.int64)
        self._sum = float(state["sum"])
        self._fresh = bool(state["fresh"])

    def start(self) -> None:
        """Follow the episode under way from its start (``reset`` calls it)."""
        self._follower.start(0, self.solo.game.deal_number)
        self._sum = 0.0
        self._fresh = True

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self.start()
        return obs, info

    def progress(self, ended: bool) -> float:
        """The progress (in phi) since the previous learner decision; ``ended``: the episode
        is over (game over, truncated, or an illegal move)."""
        solo = self.solo
        game, seat = solo.game, solo.seat
        follower = self._follower
        new_deal = game.deal_number != follower.deals[0]
        end = last_deal_end_potential(game, seat) if new_deal else 0.0
        now = 0.0 if ended else game_potential(game, seat)
        return float(follower.advance([game.deal_number], end, now, ended)[0])

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        term = self.coef * self.progress(terminated or truncated) if self.coef else 0.0
        self._fresh = terminated or truncated
        self._sum += term
        info["shaping"] = term
        if (terminated or truncated) and isinstance(info.get("episode"), dict):
            info["episode"]["shaping"] = round(self._sum, 6)
        return obs, float(reward) + term, terminated, truncated, info
