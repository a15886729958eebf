"""A model file's network over a batch of observations, its linear layers compiled by numba.

Why not ``PolicyAgent.forward`` (numpy's matrix product): numpy hands a product of a few
hundred rows to OpenBLAS, which splits it across threads that spin while they wait; on a
machine whose cores are shared with other jobs the product of 400 rows then took 50 to 300 ms
where one thread takes 0.7 ms (docs/agents.md). Here each row is one task of numba's
``prange`` (threads that wait asleep, trash_env.vector._kernels), the same arithmetic in
float32 as the one-row product of the reference path; only the order of the sums may differ,
which moves a logit by a rounding step at most.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

import trash_env.vector._kernels  # noqa: F401  (sets the OpenMP threads' wait policy first)


@njit(cache=True, parallel=True)
def linear(x, weight, bias, out) -> None:
    """``out = x @ weight + bias`` for float32 ``x`` ``(rows, k)``, ``weight`` ``(k, n)``."""
    rows, inputs = x.shape
    outputs = weight.shape[1]
    for i in prange(rows):
        for j in range(outputs):
            out[i, j] = 0.0
        for k in range(inputs):
            value = x[i, k]
            if value != 0.0:  # observations are mostly zeros (one-hot encodings)
                for j in range(outputs):
                    out[i, j] += value * weight[k, j]
        for j in range(outputs):
            out[i, j] += bias[j]


def forward(layers: list[tuple[str, Any]], x: np.ndarray) -> np.ndarray:
    """``PolicyAgent.forward`` of ``layers`` for a batch ``x`` (float32 rows): the logits as
    float64."""
    x = np.ascontiguousarray(x, np.float32)
    for kind, params in layers:
        if kind == "linear":
            weight = np.ascontiguousarray(params[0], np.float32)
            bias = np.ascontiguousarray(params[1], np.float32)
            out = np.empty((x.shape[0], weight.shape[1]), np.float32)
            linear(x, weight, bias, out)
            x = out
        elif kind == "features":
            x = np.ascontiguousarray(params(x), np.float32)
        elif kind == "tanh":
            x = np.tanh(x)
        else:
            x = np.maximum(x, 0.0)
    return x.astype(np.float64)
