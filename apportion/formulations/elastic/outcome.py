"""An elastic policy's answer as an `Outcome`: each job's configuration (or its time shares over
configurations), the GPUs it holds per type, and per-job metrics.

`allocation` is the fraction of time each job runs on each GPU type (1 on the type of its one
configuration); `effective_throughput` its goodput there (samples/s at the initial batch's
efficiency, the rate its training advances); GPUs used per type count each configuration's GPUs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.elastic.candidates import ElasticJobs
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

WAITING = "no configuration this round: the GPUs it could use went to other jobs"


def integral_outcome(
    problem: ClusterArrays,
    jobs: ElasticJobs,
    pick: IntArray,
    status: Status,
    objective: float | None,
    objective_name: str,
) -> Outcome:
    """The answer when every job runs in at most one configuration (`pick`: candidate or −1)."""
    m, k = problem.num_jobs, problem.num_types
    c = jobs.candidates
    runs = pick >= 0
    chosen = pick[runs]
    allocation = np.zeros((m, k))
    allocation[np.flatnonzero(runs), c.gpu[chosen]] = 1.0
    used = np.bincount(c.gpu[chosen], weights=c.gpus[chosen], minlength=k).astype(float)
    reasons = dict(jobs.reasons)
    if status.has_solution:
        for j in np.flatnonzero(~runs & jobs.has_candidates()).tolist():
            reasons.setdefault(j, WAITING)
    outcome = Outcome(
        status,
        objective,
        objective_name,
        allocation,
        reasons,
        job_metrics=_metrics(problem, jobs, pick),
        summary={
            "jobs_running": int(runs.sum()),
            "jobs_waiting": int((~runs & jobs.has_candidates()).sum()),
            "gpus_used": {problem.gpu_names[t]: float(used[t]) for t in range(k)},
            "restarts": int((runs & jobs.running)[runs].sum() - c.current[chosen].sum()),
        },
        effective_throughput=_per_job(m, runs, c.goodput[chosen]),
        gpu_used=used,
    )
    return outcome


def _per_job(m: int, runs: NDArray[np.bool_], values: FloatArray) -> FloatArray:
    out = np.zeros(m)
    out[runs] = values
    return out


def _metrics(problem: ClusterArrays, jobs: ElasticJobs, pick: IntArray) -> dict[str, Any]:
    """Per job, its configuration's numbers (null for a job that waits or a number not given)."""
    c = jobs.candidates
    runs = pick >= 0
    at = pick[runs]

    def column(values: NDArray[Any], given: NDArray[np.bool_] | None = None) -> NDArray[Any]:
        out = np.full(pick.size, None, dtype=object)
        shown = values[at].astype(object)
        if given is not None:
            shown[~given[at]] = None
        out[runs] = shown
        return out

    names = np.array(problem.gpu_names, dtype=object)
    restart = np.zeros(pick.size, dtype=bool)
    restart[runs] = jobs.running[c.job[at]] & ~c.current[at]
    return {
        "configuration": column(c.label),
        "gpu_type": column(names[c.gpu]),
        "gpus": column(c.gpus),
        "nodes": column(c.nodes),
        "batch_size": column(c.batch, c.batch > 0),
        "local_batch": column(c.local, c.local > 0),
        "accumulation_steps": column(c.accumulation),
        "throughput": column(c.throughput, ~np.isnan(c.throughput)),
        "goodput": column(c.goodput),
        "normalized_goodput": column(c.normalized),
        "restart": restart.astype(object),
    }


def shared_outcome(
    problem: ClusterArrays,
    jobs: ElasticJobs,
    split: tuple[IntArray, IntArray, FloatArray],
    status: Status,
    level: float | None,
) -> Outcome:
    """The answer when jobs share their time among configurations: `split` is (job, candidate,
    fraction of the job's time) for every share given."""
    m, k = problem.num_jobs, problem.num_types
    c = jobs.candidates
    job, cand, x = split
    allocation = np.zeros((m, k))
    np.add.at(allocation, (job, c.gpu[cand]), x)
    used = np.bincount(c.gpu[cand], weights=c.gpus[cand] * x, minlength=k).astype(float)
    has = jobs.has_candidates()

    def per_job(values: FloatArray) -> FloatArray:
        return np.bincount(job, weights=values * x, minlength=m).astype(float)

    runs = per_job(np.ones(x.size)) > 0
    reasons = dict(jobs.reasons)
    if status.has_solution:
        for j in np.flatnonzero(~runs & has).tolist():
            reasons.setdefault(j, WAITING)
    configurations: dict[str, list[list[float]]] = {}
    names = problem.job_ids
    for j, label, share in zip(job.tolist(), c.label[cand].tolist(), x.tolist(), strict=True):
        configurations.setdefault(names[j], []).append([label, share])
    return Outcome(
        status,
        level,
        "max-min level of normalized goodput / w_j",
        allocation,
        reasons,
        job_metrics={
            "normalized_goodput": np.where(has, per_job(c.normalized[cand]), np.nan),
            "gpus": np.where(has, per_job(c.gpus[cand].astype(float)), np.nan),
        },
        summary={
            "level": level,
            "configuration_shares": configurations,
            "gpus_used": {problem.gpu_names[t]: float(used[t]) for t in range(k)},
        },
        effective_throughput=per_job(c.goodput[cand]),
        gpu_used=used,
    )
