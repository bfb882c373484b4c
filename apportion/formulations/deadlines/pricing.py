"""What admission maximizes (FORMULATIONS §6, "objectives"): Chronus's value, or satisfaction.

`value`: option row i of job j is worth w_i, Chronus's MILP objective, the right one for the
decision in hand (solved to the request's gap: `mip_gap` 0 for the proven optimum).
`satisfaction` aims at what Chronus's `schedule_summary` measures over a whole trace: the mean over
SLO jobs of w(first option met) / w̄_j (w̄_j: the job's best value), jobs that were
never guaranteed included. A guarantee earns its job w_i / w̄_j, but its leases are taken from
the others: a guaranteed job's leases run ahead of the jobs without a guarantee (shortest
remaining time first), which then meet fewer deadlines, and it holds them however long it is.
So each row is priced

    a_i = w_i / w̄_j − π · ρ · r_j · L_j,      ρ = clip(Σ_j g_j / C − 1, 0, 1)

with r_j the reserved GPUs, L_j the leases, π the `lease_price` per GPU-lease and ρ the pressure
on the cluster (the GPUs every job with work left asks for, beyond the C it has: nothing when
all of them fit at once, the whole price from twice the cluster on): a job is guaranteed only
when it earns more than the GPU-leases it takes would earn the jobs behind it.
A new job is offered only the rows with a_i > 0; rows of jobs already guaranteed keep
w_i / w̄_j (they are kept whatever they cost).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import FloatArray


def best_values(problem: LeaseProblem) -> FloatArray:
    """w̄_j: each job's best option value (0 without options)."""
    best = np.zeros(problem.num_jobs)
    np.maximum.at(best, problem.row_job, problem.row_value)
    return best


def pressure(problem: LeaseProblem) -> float:
    """ρ: how far the GPUs every job with work left asks for exceed the cluster, 0 … 1."""
    asked = float(problem.demand[problem.leases > 0].sum())
    return float(np.clip(asked / problem.capacity - 1.0, 0.0, 1.0))


def weighted(problem: LeaseProblem, objective: str, lease_price: float) -> LeaseProblem:
    """The problem admission maximizes: option values as given (`value`), or priced shares of
    each job's best value (`satisfaction`), rows not worth offering to a new job left out."""
    if objective == "value":
        return problem
    job = problem.row_job
    share = problem.row_value / np.maximum(best_values(problem)[job], 1e-300)
    priced = share - lease_price * pressure(problem) * problem.reserve[job] * problem.leases[job]
    new = ~problem.guaranteed[job]
    return replace(
        problem,
        row_value=np.where(new, priced, share),
        row_kept=problem.row_kept & (~new | (priced > 0)),
    )
