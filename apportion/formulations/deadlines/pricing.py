"""What admission maximizes (FORMULATIONS §6, "objectives"): Chronus's value, or satisfaction.

`value`: option row i of job j is worth w_i, Chronus's MILP objective, exact for the decision in
hand. `satisfaction` aims at what Chronus's `schedule_summary` measures over a whole trace, the
mean over SLO jobs of w(first option met) / w̄_j (w̄_j: the job's best value), jobs that were
never guaranteed included. A guarantee earns its job w_i / w̄_j, but its leases are taken from
the others: on a busy cluster a guaranteed job's leases run ahead of the jobs that run without
one (shortest remaining time first), which then meet fewer deadlines. So each row is priced

    a_i = w_i / w̄_j − π · r_j · β_i,     β_i = clip(L_j − (M_i − B), 0, L_j)

with β_i the leases that must fall inside the busy period B (they cannot all wait until it is
over and still meet the option), r_j the reserved GPUs and π the `busy_price` per GPU-lease (a
share of a job's best value). A new job is offered only the rows with a_i > 0; rows of jobs
already guaranteed keep w_i / w̄_j (they are kept whatever they cost).

The busy period is a fluid estimate: if every active job ran from now at its own GPUs, job j
for its L_j leases, the cluster's C GPUs catch up with the demand at the first B > 0 with

    Σ_j g_j · min(B, L_j)  ≤  C · B,

B = 0 when Σ_j g_j ≤ C (nothing waits). Piecewise linear in B: found at the breakpoints L_j.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.deadlines.problem import LeaseProblem

FloatArray = NDArray[np.float64]


def best_values(problem: LeaseProblem) -> FloatArray:
    """w̄_j: each job's best option value (0 without options)."""
    best = np.zeros(problem.num_jobs)
    np.maximum.at(best, problem.row_job, problem.row_value)
    return best


def busy_period(problem: LeaseProblem) -> float:
    """B in slots (module docstring); jobs with unknown work count for the horizon."""
    leases = np.minimum(problem.remaining / problem.lease, problem.horizon)
    leases = np.where(np.isfinite(leases), leases, problem.horizon)
    order = np.argsort(leases, kind="stable")
    ends, gpus = leases[order], problem.demand[order].astype(float)
    slope = gpus.sum() - problem.capacity  # d/dB of Σ g min(B, L) − C·B before any job ends
    if slope <= 0:
        return 0.0
    excess, at = 0.0, 0.0
    for end, g in zip(ends.tolist(), gpus.tolist(), strict=True):
        reached = excess + slope * (end - at)
        if slope < 0 and reached <= 0:
            break
        excess, at, slope = reached, end, slope - g
    return float(at - excess / slope) if slope < 0 else float(at)


def weighted(problem: LeaseProblem, objective: str, busy_price: float) -> LeaseProblem:
    """The problem admission maximizes: option values as given (`value`), or priced shares of
    each job's best value (`satisfaction`), rows not worth offering to a new job left out."""
    if objective == "value":
        return problem
    job = problem.row_job
    share = problem.row_value / np.maximum(best_values(problem)[job], 1e-300)
    need = problem.leases[job].astype(float)
    inside = np.clip(need - np.maximum(problem.row_slots - busy_period(problem), 0.0), 0.0, need)
    priced = share - busy_price * problem.reserve[job] * inside
    new = ~problem.guaranteed[job]
    return replace(
        problem,
        row_value=np.where(new, priced, share),
        row_kept=problem.row_kept & (~new | (priced > 0)),
    )
