"""A model file's network over a batch of observations, its linear layers compiled by numba.

Why not ``PolicyAgent.forward`` (numpy's matrix product): numpy hands a product of a few
hundred rows to OpenBLAS, which splits it across threads that spin while they wait; on a
machine whose cores are shared with other jobs the product of 400 rows then took 50 to 300 ms
where one thread takes 0.7 ms (docs/agents.md).

Two forms, each row's numbers independent of the other rows and of the batch's size:

- the first linear layer reads the observation, mostly zeros (one-hot encodings): a row adds
  ``value * weight[k]`` for each non-zero input ``k`` in turn (:func:`sparse_linear`); its
  ``prange`` form (numba's threads, which wait asleep: trash_env.vector._kernels) for large
  batches and its serial form below, the same arithmetic;
- the other linear layers read dense activations: each output is a dot product that numba may
  vectorise (sums reassociated, multiply-adds fused: :func:`dense_linear`), on one thread,
  several times faster than the sparse form there (docs/benchmarks.md).

Either way a logit may differ from the reference path's one-row product (OpenBLAS) in its last
bits, which changes an action only when two legal logits tie that closely (docs/agents.md);
tests/test_evaluation_batched.py compares every game with the reference path.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import prange

from trash_env.numba_cache import njit
from trash_env.vector._kernels import PARALLEL_MIN_GAMES  # also sets the threads' wait policy
from trash_env.vector._threads import PARALLEL_LOCK


@njit(cache=True, inline="always")
def _sparse_row(x, weight, bias, out, i) -> None:
    outputs = weight.shape[1]
    for j in range(outputs):
        out[i, j] = 0.0
    for k in range(x.shape[1]):
        value = x[i, k]
        if value != 0.0:
            for j in range(outputs):
                out[i, j] += value * weight[k, j]
    for j in range(outputs):
        out[i, j] += bias[j]


@njit(cache=True)
def _sparse_linear_serial(x, weight, bias, out) -> None:
    for i in range(x.shape[0]):
        _sparse_row(x, weight, bias, out, i)


@njit(cache=True, parallel=True)
def _sparse_linear_parallel(x, weight, bias, out) -> None:
    for i in prange(x.shape[0]):
        _sparse_row(x, weight, bias, out, i)


def sparse_linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, out: np.ndarray) -> None:
    """``out = x @ weight + bias`` (float32; ``weight`` ``(k, n)``), skipping zero inputs."""
    if x.shape[0] >= PARALLEL_MIN_GAMES:
        with PARALLEL_LOCK:  # numba's workqueue layer takes one launch at a time
            _sparse_linear_parallel(x, weight, bias, out)
    else:
        _sparse_linear_serial(x, weight, bias, out)


@njit(cache=True, fastmath={"reassoc", "contract"})
def dense_linear(x, weight_t, bias, out) -> None:
    """``out = x @ weight_t.T + bias`` (float32; ``weight_t`` ``(n, k)``, one output's
    weights a row): four dot products at a time share each input's load."""
    rows, inputs = x.shape
    outputs = weight_t.shape[0]
    whole = outputs - outputs % 4
    for i in range(rows):
        row = x[i]
        for j in range(0, whole, 4):
            w0, w1, w2, w3 = weight_t[j], weight_t[j + 1], weight_t[j + 2], weight_t[j + 3]
            s0 = s1 = s2 = s3 = np.float32(0.0)
            for k in range(inputs):
                value = row[k]
                s0 += value * w0[k]
                s1 += value * w1[k]
                s2 += value * w2[k]
                s3 += value * w3[k]
            out[i, j] = s0 + bias[j]
            out[i, j + 1] = s1 + bias[j + 1]
            out[i, j + 2] = s2 + bias[j + 2]
            out[i, j + 3] = s3 + bias[j + 3]
        for j in range(whole, outputs):
            w0 = weight_t[j]
            s0 = np.float32(0.0)
            for k in range(inputs):
                s0 += row[k] * w0[k]
            out[i, j] = s0 + bias[j]


def forward(layers: list[tuple[str, Any]], x: np.ndarray) -> np.ndarray:
    """``PolicyAgent.forward`` of ``layers`` for a batch ``x`` (float32 rows): the logits as
    float64."""
    x = np.ascontiguousarray(x, np.float32)
    first = True
    for kind, params in layers:
        if kind == "linear":
            weight = np.asarray(params[0], np.float32)
            bias = np.ascontiguousarray(params[1], np.float32)
            out = np.empty((x.shape[0], weight.shape[1]), np.float32)
            if first:
                sparse_linear(x, np.ascontiguousarray(weight), bias, out)
            else:
                dense_linear(x, np.ascontiguousarray(weight.T), bias, out)
            first = False
            x = out
        elif kind == "features":
            x = np.ascontiguousarray(params(x), np.float32)
        elif kind == "tanh":
            x = np.tanh(x)
        else:
            x = np.maximum(x, 0.0)
    return x.astype(np.float64)
