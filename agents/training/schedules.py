"""When things happen in a run: the learning rate's and the shaping coefficient's annealing,
the evaluation points, the next multiple of an interval."""

from __future__ import annotations

import math
from collections.abc import Callable


def learning_rate(lr: float, decay: float) -> float | Callable[[float], float]:
    """The learning rate stable-baselines3 is given: ``lr`` falling linearly by the fraction
    ``decay`` over the run (a function of the progress remaining, 1 at the start and 0 at
    ``--timesteps``: a run resumed to the same ``--timesteps`` follows the same schedule), or
    the constant ``lr`` when ``decay`` is 0."""
    if not decay:
        return lr

    def rate(progress_remaining: float) -> float:
        return lr * (1.0 - decay * (1.0 - progress_remaining))

    return rate


def shaping_end(shaping_until: float, timesteps: int) -> int:
    """The step where the annealed shaping reaches 0: ``shaping_until`` of the run."""
    return max(1, round(shaping_until * timesteps))


def shaping_at(coef: float, end: int, steps: int) -> float:
    """The shaping coefficient at ``steps``: ``coef`` annealed linearly to 0 at ``end``."""
    if not coef or steps >= end:
        return 0.0
    return coef * (1.0 - steps / end)


def next_multiple(steps: int, every: int) -> int:
    """The first multiple of ``every`` after ``steps``."""
    return (steps // every + 1) * every


def next_eval_after(steps: int, every: int) -> float:
    """The next step to evaluate at after ``steps``: every ``every`` steps, and in the first
    interval also at 1/16, 1/8, 1/4 and 1/2 of it, where a run from scratch climbs fastest
    (the curve would hide the climb otherwise); ``inf`` when ``every`` is 0."""
    if not every:
        return math.inf
    for point in (every // 16, every // 8, every // 4, every // 2):
        if point > steps:
            return point
    return (steps // every + 1) * every
