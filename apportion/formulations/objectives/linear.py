"""Maximum of a linear objective Σ_jk c_jk X_jk over the base constraints (FORMULATIONS §4): the
one LP behind `max_total_throughput` and `throughput_per_dollar`.

For groups g of n_g identical jobs (same usable c_g·, scale factor s_g):

    maximize    Σ_g n_g Σ_k c_gk X_gk
    subject to  Σ_k X_gk ≤ 1  ∀g,   Σ_g n_g s_g X_gk ≤ N_k  ∀k,   X ≥ 0 where the job can run

The objective is linear, so merging identical jobs is exact (averaging an optimum over a group's
members is feasible and scores the same). The reported objective is the sum recomputed on the
returned allocation.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.allocation import (
    JobGroups,
    add_allocation,
    add_base_constraints,
    repair_allocation,
)
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Model, Sense
from apportion.solver.policy import Outcome
from apportion.solver.status import Status

REPAIR_TOLERANCE = 1e-6
# Large distinct-job models go to an interior point, whose iterations do not grow with the jobs
# as the simplex's do; merged Gavel-type mixes stay tiny and go to simplex for an exact vertex
# (the `objectives` bench's throughput rows).
SIMPLEX_MAX_VARIABLES = 3_000


def solve_linear(
    problem: ClusterArrays, ctx: SolveContext, weight: FloatArray, name: str
) -> tuple[Status, FloatArray, list[str], int | None, Solution | None]:
    """Maximize Σ_jk weight_jk X_jk over the base constraints; weight is 0 where unusable."""
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    active = np.flatnonzero(problem.eligible.any(axis=1))
    if active.size == 0:
        return Status.OPTIMAL, allocation, [], None, None
    usable = np.where(problem.eligible[active], weight[active], 0.0)
    key = np.column_stack([usable, problem.scale_factor[active]])
    merge = ctx.options.merge_identical
    groups = JobGroups.by_rows(active, key) if merge else JobGroups.identity(active)
    rep = groups.representative
    labels = [problem.job_ids[j] for j in rep]
    model = Model(name)
    x = add_allocation(model, problem.eligible[rep], labels, problem.gpu_names)
    gpus = groups.count * problem.scale_factor[rep]
    add_base_constraints(model, x, gpus, problem.gpu_count, labels, problem.gpu_names)
    scale = float(np.abs(usable).max()) or 1.0  # keep objective coefficients O(1)
    model.set_objective(
        {x.block: groups.count[x.group] * weight[rep][x.group, x.gpu] / scale}, Sense.MAXIMIZE
    )
    method = LpMethod.SIMPLEX if x.block.size <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
    solution = ctx.solve(SolveRequest(model, method))
    merged = groups.size if merge else None
    if not solution.status.has_solution:
        return solution.status, allocation, [], merged, solution
    allocation[active] = x.dense(solution.value(x.block))[groups.inverse]
    allocation, repair = repair_allocation(allocation, problem.scale_factor, problem.gpu_count)
    if repair > REPAIR_TOLERANCE:
        warning = f"solver answer violated constraints by {repair:.2e}; scaled back"
        return Status.FEASIBLE, allocation, [warning], merged, solution
    return solution.status, allocation, [], merged, solution


def linear_outcome(
    problem: ClusterArrays,
    ctx: SolveContext,
    weight: FloatArray,
    name: str,
    objective_name: str,
) -> Outcome:
    status, allocation, warnings, merged, solution = solve_linear(problem, ctx, weight, name)
    eff = np.einsum("jk,jk->j", problem.throughput, allocation)
    summary: dict[str, object] = {"total_throughput": float(eff.sum())}
    used = problem.scale_factor @ allocation
    if not np.isnan(problem.price_per_hour[used > 0]).any():
        summary["cost_per_hour"] = float(np.nansum(problem.price_per_hour * used))
    objective = float(np.einsum("jk,jk->", weight, allocation)) if status.has_solution else None
    return Outcome(
        status,
        objective,
        objective_name,
        allocation,
        problem.unplaceable_reasons(),
        summary=summary,
        warnings=warnings,
        merged_groups=merged,
        solution=solution,
    )
