"""The exact robust counterpart of max-min fairness over a throughput box (FORMULATIONS §1f).

A job's share is at least t for every T' in the box [T^lo, T^hi] exactly when

    min over T' of Σ_k T'_jk (s_j X_jk − w_j t b_k) ≥ 0,      b_k = N_k / C,

and the inner minimum, cell by cell, is Σ_k min(T^lo_jk c_jk, T^hi_jk c_jk) with
c_jk = s_j X_jk − w_j t b_k, linear in (X, t) (t multiplies constants only). One free variable
per cell, below both ends, makes it an LP; each job's cells are divided by w_j prop_j (its
nominal reference throughput), so coefficients are shares of order 1:

    maximize    t
    subject to  U_jk ≤ (T^e_jk / (w_j prop_j)) (s_j X_jk − w_j b_k t)  ∀j, k: T_jk > 0; e: lo, hi
                Σ_k U_jk ≥ 0                                            ∀j   (worst share ≥ t)
                Σ_k X_jk ≤ 1  ∀j,   Σ_j s_j X_jk ≤ N_k  ∀k,   X ≥ 0 where the job can run

Types where the job cannot run still count in its reference (X_jk = 0 there, c_jk = −w_j t b_k).
With `pareto`, a second LP holds t ≥ t* and maximizes the nominal Σ_j s_j eff_j / (w_j prop_j).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.allocation import JobGroups, add_allocation, add_base_constraints
from apportion.formulations.uncertainty import reference_throughput
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import INF, Block, Model, Sense
from apportion.solver.status import Status

#: The Pareto LP's floor sits this far (relative) below t*, as max-min's does (§1d).
FLOOR_SLACK = 1e-9
SIMPLEX_MAX_VARIABLES = 3_000


@dataclass(frozen=True)
class RobustAnswer:
    status: Status
    level: float | None  # t*
    allocation: FloatArray  # (jobs, types)
    solution: Solution | None
    pareto: str  # what the Pareto stage did
    merged_groups: int | None = None


def solve_exact(
    problem: ClusterArrays, low: FloatArray, high: FloatArray, ctx: SolveContext, pareto: bool
) -> RobustAnswer:
    """t* and an allocation reaching it (module docstring); jobs that run nowhere are left out."""
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    active = np.flatnonzero(problem.eligible.any(axis=1))
    if active.size == 0:
        return RobustAnswer(Status.OPTIMAL, None, allocation, None, "off")
    groups = _groups(problem, active, low, high, ctx.options.merge_identical)
    model, x, t = _model(problem, groups, low, high)
    method = LpMethod.SIMPLEX if model.num_cols <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
    first = ctx.solve(SolveRequest(model, method))
    merged = groups.size if ctx.options.merge_identical else None
    if first.status is not Status.OPTIMAL:
        return RobustAnswer(first.status, None, allocation, first, "off", merged)
    level = max(float(first.value(t)[0]), 0.0)
    chosen, stage = first, "off"
    if pareto:
        floor = level * (1.0 - FLOOR_SLACK)
        model, x, t = _model(problem, groups, low, high, floor)
        second = ctx.solve(SolveRequest(model, method, auxiliary=True))
        chosen, stage = (second, "second LP") if second.status is Status.OPTIMAL else (first, "")
    per_group = np.zeros((groups.size, problem.num_types))
    rows, cols = np.nonzero(problem.eligible[groups.representative])
    per_group[rows, cols] = chosen.value(x)
    allocation[active] = per_group[groups.inverse]
    return RobustAnswer(Status.OPTIMAL, level, allocation, chosen, stage or "not applied", merged)


def _groups(
    problem: ClusterArrays, active: IntArray, low: FloatArray, high: FloatArray, merge: bool
) -> JobGroups:
    """Jobs with the same throughputs, bounds, scale factor and weight. Merging is exact: each
    job's robust rows describe a convex set of its own allocations, so the average of a group's
    allocations is feasible for each member and reaches the same level."""
    if not merge:
        return JobGroups.identity(active)
    key = np.column_stack(
        [
            problem.throughput[active],
            low[active],
            high[active],
            problem.scale_factor[active],
            problem.weight[active],
        ]
    )
    return JobGroups.by_rows(active, key)


def _model(
    problem: ClusterArrays,
    groups: JobGroups,
    low: FloatArray,
    high: FloatArray,
    floor: float | None = None,
) -> tuple[Model, Block, Block]:
    """(model, X, t) over one representative per group: maximize t, or with a `floor` on t the
    nominal total share Σ_j s_j eff_j / (w_j prop_j) (the Pareto LP)."""
    active, count = groups.representative, groups.count
    labels = [problem.job_ids[j] for j in active]
    model = Model("robust_max_min")
    xa = add_allocation(model, problem.eligible[active], labels, problem.gpu_names)
    s, w = problem.scale_factor[active], problem.weight[active]
    prop = reference_throughput(problem.throughput[active], problem.gpu_count)
    b = problem.gpu_count / problem.gpu_count.sum()
    job, gpu = np.nonzero(problem.throughput[active] > 0)  # the cells of U
    u = model.add_variables("u", job.size, lower=-INF)
    t = model.add_variables("t", 1, lower=0.0 if floor is None else floor)
    # Column of X for each cell of U, where the job may run there.
    where = np.full(problem.throughput[active].shape, -1)
    where[xa.group, xa.gpu] = np.arange(xa.block.size)
    col = where[job, gpu]
    runs = col >= 0
    cells = np.arange(job.size)
    for end in (low[active], high[active]):
        scale = end[job, gpu] / (w[job] * prop[job])
        x_terms = sp.csr_matrix(
            (-scale[runs] * s[job[runs]], (cells[runs], col[runs])),
            shape=(job.size, xa.block.size),
        )
        t_terms = (scale * w[job] * b[gpu])[:, None]
        identity = sp.identity(job.size, format="csr")
        model.add_constraints("worst", {u: identity, xa.block: x_terms, t: t_terms}, upper=0.0)
    model.add_constraints(
        "share",
        {u: sp.csr_matrix((np.ones(job.size), (job, cells)), shape=(active.size, job.size))},
        lower=0.0,
        coords=(("job", labels),),
    )
    add_base_constraints(model, xa, count * s, problem.gpu_count, labels, problem.gpu_names)
    if floor is None:
        model.set_objective({t: 1.0}, Sense.MAXIMIZE)
    else:
        gain = count * s / (w * prop)
        nominal = gain[xa.group] * problem.throughput[active][xa.group, xa.gpu]
        model.set_objective({xa.block: nominal}, Sense.MAXIMIZE)
    return model, xa.block, t
