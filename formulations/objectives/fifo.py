"""Heterogeneity-aware FIFO (FORMULATIONS §5): a deterministic rule, no LP.

Jobs in arrival order (`arrival_time`, ties broken by id in string order) each take, among the GPU
types that still have at least s_j free GPUs and where the job can run, the type where it runs
fastest (ties: the snapshot's type order), for all of the time: X_jk = 1.

- `strict`: the first job that fits nowhere stops the queue; every later job waits too.
- `backfill`: that job waits, and later jobs that fit start anyway.

Jobs that can never run (no positive throughput, or a gang wider than every usable type) and jobs
with no steps remaining are skipped with their reason; they never block the queue, since waiting
for them would stall it forever.

Guarantees, by construction: no type is over-subscribed (Σ_j s_j X_jk ≤ N_k), each job runs on at
most one type with X ∈ {0, 1}, and in strict mode the running jobs are exactly the placeable
prefix of the queue (no later job overtakes an earlier one). The status is `optimal` in the sense
that the allocation is exactly the rule's, with nothing approximated; the objective is the number
of jobs running.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from formulations.inputs import require_job_field
from solver.arrays import ClusterArrays
from solver.context import SolveContext
from solver.options import PolicyOptions
from solver.policy import Outcome, Policy
from solver.snapshot import Snapshot
from solver.status import Status

NAME = "fifo"


class FifoOptions(PolicyOptions):
    mode: Literal["strict", "backfill"] = Field(
        "strict",
        description="strict: the first job that fits nowhere makes every later job wait; "
        "backfill: later jobs that fit start anyway.",
    )


def queue_order(problem: ClusterArrays) -> list[int]:
    """Job indices by arrival time, ties by id."""
    order = np.lexsort((np.array(problem.job_ids), problem.arrival_time))
    return [int(j) for j in order]


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: FifoOptions, ctx: SolveContext
) -> Outcome:
    everyone = np.arange(problem.num_jobs)
    require_job_field(problem, problem.arrival_time, everyone, "arrival_time", NAME)
    reasons = problem.unplaceable_reasons()
    for j in np.flatnonzero(problem.steps_remaining <= 0):
        reasons[int(j)] = "no steps remaining"
    order = queue_order(problem)
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    blocker = _place(problem, order, options.mode == "strict", reasons, allocation)
    position = np.empty(problem.num_jobs, dtype=np.int64)
    position[order] = np.arange(1, problem.num_jobs + 1)
    running = allocation.any(axis=1)
    return Outcome(
        Status.OPTIMAL,
        float(running.sum()),
        "jobs running",
        allocation,
        reasons,
        job_metrics={"queue_position": position.astype(object), "running": running.astype(object)},
        summary={
            "mode": options.mode,
            "running": int(running.sum()),
            "waiting": int(problem.num_jobs - running.sum()),
            "blocked_by": None if blocker is None else problem.job_ids[blocker],
        },
    )


def _place(
    problem: ClusterArrays,
    order: list[int],
    strict: bool,
    reasons: dict[int, str],
    allocation: NDArray[np.float64],
) -> int | None:
    """Walk the queue, filling `allocation` and `reasons`; returns the strict-mode blocker."""
    free = problem.gpu_count.tolist()
    speed = np.where(problem.eligible, problem.throughput, 0.0).tolist()
    scale = problem.scale_factor.tolist()
    types = range(problem.num_types)
    blocker: int | None = None
    for j in order:
        if j in reasons:
            continue
        if blocker is not None:
            reasons[j] = f"waiting behind {problem.job_ids[blocker]!r} (strict FIFO)"
            continue
        fits = [k for k in types if speed[j][k] > 0 and free[k] >= scale[j]]
        if not fits:
            reasons[j] = f"waiting: no GPU type it can run on has {int(scale[j])} free GPUs"
            blocker = j if strict else None
            continue
        best = max(fits, key=lambda k: (speed[j][k], -k))
        allocation[j, best] = 1.0
        free[best] -= scale[j]
    return blocker


POLICY = Policy(
    name=NAME,
    summary="Heterogeneity-aware FIFO: in arrival order, each job takes the fastest type with "
    "enough free GPUs (strict or backfill); deterministic, no LP.",
    options=FifoOptions,
    run=run,
    problem_class="algorithm",
    needs=frozenset(),
)
