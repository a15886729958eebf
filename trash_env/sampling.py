"""An action drawn from a policy's logits over the legal actions only: the one masked sampling of
``agents``' policy agent (one observation) and the batched env's policy opponents (a batch).

Why here: trash_env may not import agents, and both must draw alike. The draw is numpy's
``Generator.choice(13, p=probs)`` written out for a batch (one ``rng.random()`` per row, the
same normalisation and cumulative sums), so a batch of one consumes the generator and picks the
action exactly as that call does.
"""

from __future__ import annotations

import numpy as np


def masked_choice(
    logits: np.ndarray, legal: np.ndarray, rng: np.random.Generator, deterministic: bool
) -> np.ndarray:
    """Per row of ``logits`` (``(13,)`` or ``(B, 13)``), the argmax over the ``legal`` actions
    (``deterministic``), or an action drawn with probabilities softmax(logits) over them. A
    masked action is never drawn: its weight is 0, so no uniform number can land on it."""
    masked = np.where(legal, logits, -np.inf)
    if deterministic:
        return masked.argmax(axis=-1)
    probs = np.exp(masked - masked.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    cdf = probs.cumsum(axis=-1)
    cdf /= cdf[..., -1:]
    u = rng.random(cdf.shape[:-1])
    return (cdf <= u[..., None]).sum(axis=-1)
