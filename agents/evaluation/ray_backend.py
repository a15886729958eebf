"""Ray backend of :func:`agents.evaluation.evaluate`: the same deal chunks as the local process
pool, played as Ray tasks, so a tournament can use every core of a Ray cluster.

Why Ray and nothing home-made: scheduling, shipping code and data to other machines, and
failure handling are Ray's job. This module only maps the evaluation's own task
function (:func:`agents.evaluation.tournament.play_deals` over a range of deal numbers) onto
``ray.remote`` and hands the results back in range order, so the report (every figure is
computed in the driver, in deal order) is the same as the local backend's for the same seed.

Where it runs: if Ray is already initialised in the process, there; else ``ray.init(address)``
with ``address`` from the argument or the ``RAY_ADDRESS`` environment variable (a running
cluster: ``ray start --head`` on one machine, ``ray start --address=HEAD:6379`` on the others,
then ``RAY_ADDRESS=auto`` on the head or ``RAY_ADDRESS=ray://HEAD:10001`` from outside); with
neither, a local Ray instance of ``workers`` CPUs, shut down at the end. Every node needs this
project installed (``pip install -e ".[ray]"``), and the model files an agent spec names at the
same path.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence
from typing import Any

from agents.evaluation import tournament
from agents.evaluation.tournament import GameResult, Plan
from trash_env.integrations import require

_REMOTE: dict[str, Any] = {}


def _play_range(plan: Plan, first: int, stop: int) -> list[GameResult]:
    """One Ray task: the evaluation's worker set-up (once per worker process and plan, so
    agents and models are built once) and its deals."""
    tournament.start_worker(plan)
    return tournament.play_deals(first, stop)


def ray_stream(
    plan: Plan,
    ranges: Sequence[tuple[int, int]],
    workers: int,
    address: str | None = None,
) -> Generator[list[GameResult], None, None]:
    """Play ``ranges`` (``(first, stop)`` deal numbers) as Ray tasks; yield each range's
    results in order. ``workers`` is the CPU count of a local instance this call starts."""
    ray = require("ray", "ray")
    started = False
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS") or None
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None:
            kwargs["num_cpus"] = workers
        ray.init(address=address, **kwargs)
        started = True
    try:
        remote = _REMOTE.get("play")
        if remote is None:
            remote = _REMOTE["play"] = ray.remote(num_cpus=1, max_retries=2)(_play_range)
        plan_ref = ray.put(plan)
        refs = [remote.remote(plan_ref, first, stop) for first, stop in ranges]
        try:
            for ref in refs:
                yield ray.get(ref)
        except BaseException:
            for ref in refs:
                ray.cancel(ref)
            raise
    finally:
        if started:
            ray.shutdown()
