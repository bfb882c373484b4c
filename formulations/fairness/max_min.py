"""Heterogeneity-aware max-min fairness (Gavel's LAS policy), FORMULATIONS §1.

For groups g of n_g identical jobs (identical T_g·, s_g, w_g), prop_g = Σ_k T_gk N_k / C:

    maximize    t
    subject to  t − (s_g / (w_g prop_g)) Σ_k T_gk X_gk ≤ 0    ∀g   (share)
                Σ_k X_gk ≤ 1                                  ∀g   (time)
                Σ_g n_g s_g X_gk ≤ N_k                         ∀k   (capacity)
                X_gk ∈ [0, 1] where the job can run on k, absent elsewhere

The heterogeneity-agnostic variant replaces T_gk by 1 wherever the job can run. Jobs that can run
nowhere are left out of the LP (they would pin t at 0) and reported with the reason.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from formulations.allocation import (
    Allocation,
    JobGroups,
    add_allocation,
    add_base_constraints,
    normalized_share,
    repair_allocation,
)
from formulations.fairness.max_min_sharing import run_space_sharing
from formulations.fairness.space_sharing import SpaceSharingOptions
from solver.arrays import ClusterArrays
from solver.backends import LpMethod
from solver.context import SolveContext
from solver.model import Model, Sense
from solver.policy import Outcome, Policy
from solver.snapshot import Snapshot
from solver.status import Status

FloatArray = NDArray[np.float64]

# Measured on the benchmark family: the LP is degenerate, so dual simplex crawls beyond a few
# thousand variables while interior point (with crossover, for an exact vertex) stays fast.
SIMPLEX_MAX_VARIABLES = 3_000
REPAIR_TOLERANCE = 1e-6


class MaxMinFairnessOptions(SpaceSharingOptions):
    heterogeneity_aware: bool = Field(
        True, description="Use per-type throughputs; false treats every usable type as equal."
    )


def policy_throughput(problem: ClusterArrays, heterogeneity_aware: bool) -> FloatArray:
    """The T the policy optimizes: measured throughputs, or 1 wherever the job can run."""
    if heterogeneity_aware:
        return problem.throughput
    return (problem.throughput > 0).astype(float)


def group_jobs(
    problem: ClusterArrays, jobs: NDArray[np.int64], throughput: FloatArray, merge: bool
) -> JobGroups:
    """Merge jobs identical in everything the LP sees: usable throughputs, scale factor, weight."""
    if not merge:
        return JobGroups.identity(jobs)
    usable = np.where(problem.eligible[jobs], throughput[jobs], 0.0)
    key = np.column_stack([usable, problem.scale_factor[jobs], problem.weight[jobs]])
    return JobGroups.by_rows(jobs, key)


def build(
    problem: ClusterArrays, throughput: FloatArray, groups: JobGroups
) -> tuple[Model, Allocation]:
    """The max-min LP over job groups; returns the model and its allocation block."""
    rep = groups.representative
    labels = [problem.job_ids[j] for j in rep]
    prop = throughput[rep] @ problem.gpu_count / problem.gpu_count.sum()
    model = Model("max_min_fairness")
    x = add_allocation(model, problem.eligible[rep], labels, problem.gpu_names)
    t = model.add_variables("t", 1, lower=0.0)
    gain = (problem.scale_factor[rep] / (problem.weight[rep] * prop))[x.group]
    share_terms = x.per_group(-gain * throughput[rep][x.group, x.gpu])
    model.add_constraints(
        "share",
        {t: np.ones((groups.size, 1)), x.block: share_terms},
        upper=0.0,
        coords=(("job", labels),),
    )
    add_base_constraints(
        model,
        x,
        groups.count * problem.scale_factor[rep],
        problem.gpu_count,
        labels,
        problem.gpu_names,
    )
    model.set_objective({t: 1.0}, Sense.MAXIMIZE)
    return model, x


def lp_method_for(num_variables: int) -> LpMethod:
    return LpMethod.SIMPLEX if num_variables <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MaxMinFairnessOptions, ctx: SolveContext
) -> Outcome:
    if options.space_sharing:
        return run_space_sharing(snapshot, problem, options, ctx)
    throughput = policy_throughput(problem, options.heterogeneity_aware)
    reasons = problem.unplaceable_reasons()
    active = np.flatnonzero(problem.eligible.any(axis=1))
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    name = "minimum normalized share"
    if active.size == 0:
        return Outcome(Status.OPTIMAL, None, name, allocation, reasons)

    groups = group_jobs(problem, active, throughput, ctx.options.merge_identical)
    model, x = build(problem, throughput, groups)
    solution = ctx.solve(model, lp_method_for(x.block.size))
    merged = groups.size if ctx.options.merge_identical else None
    if not solution.status.has_solution:
        return Outcome(solution.status, None, name, allocation, reasons, merged_groups=merged)

    allocation[active] = x.dense(solution.value(x.block))[groups.inverse]
    allocation, repair = repair_allocation(allocation, problem.scale_factor, problem.gpu_count)
    prop = throughput @ problem.gpu_count / problem.gpu_count.sum()
    share = normalized_share(throughput, allocation, problem.scale_factor, problem.weight, prop)
    status, warnings = solution.status, []
    if repair > REPAIR_TOLERANCE:
        status = Status.FEASIBLE
        warnings.append(f"solver answer violated constraints by {repair:.2e}; scaled back")
    return Outcome(
        status,
        float(share[active].min()),
        name,
        allocation,
        reasons,
        warnings=warnings,
        normalized_share=share,
        merged_groups=merged,
    )


POLICY = Policy(
    name="max_min_fairness",
    summary="Maximize the minimum normalized share s_j·eff_j/(w_j·prop_j) (Gavel LAS).",
    options=MaxMinFairnessOptions,
    run=run,
)
