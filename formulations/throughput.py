"""Maximum total throughput and throughput per dollar (FORMULATIONS §4), one LP each.

For groups g of n_g identical jobs (same usable T_g·, scale factor s_g):

    maximize    Σ_g n_g Σ_k c_gk X_gk
    subject to  Σ_k X_gk ≤ 1  ∀g,   Σ_g n_g s_g X_gk ≤ N_k  ∀k,   X ≥ 0 where the job can run

with, per policy and option,

    max_total_throughput        c_gk = T_gk                 (Σ_j eff_j, steps/s)
      normalized=true           c_gk = T_gk / prop_g        (Σ_j eff_j / prop_j, equal-share units)
    throughput_per_dollar       c_gk = T_gk / p_k           (Gavel's objective: steps/s of each job
                                                             weighted by 1 / price per GPU-hour)
      gang_price=true           c_gk = T_gk / (s_g p_k)     (steps per dollar of the whole gang)

The objective is linear, so merging identical jobs is exact (averaging an optimum over a group's
members is feasible and scores the same). The reported objective is the sum recomputed on the
returned allocation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from formulations.allocation import (
    JobGroups,
    add_allocation,
    add_base_constraints,
    repair_allocation,
)
from formulations.inputs import require_prices
from solver.backends import LpMethod
from solver.model import Model, Sense
from solver.options import PolicyOptions
from solver.policy import Outcome, Policy, SolveContext
from solver.problem import ClusterArrays
from solver.snapshot import Snapshot
from solver.status import Status

FloatArray = NDArray[np.float64]
REPAIR_TOLERANCE = 1e-6
# Measured at 10,000 distinct jobs × 3 types: HiGHS simplex 7.3 s, Clarabel's interior point 0.27 s
# (HiGHS's 0.38 s); merged Gavel-type mixes stay tiny and go to simplex for an exact vertex.
SIMPLEX_MAX_VARIABLES = 3_000


class MaxThroughputOptions(PolicyOptions):
    normalized: bool = Field(
        False,
        description="Maximize Σ_j eff_j / prop_j (each job's equal-share throughput) instead.",
    )


class PerDollarOptions(PolicyOptions):
    gang_price: bool = Field(
        False,
        description="Divide by the price of the job's whole gang, s_j·p_k (steps per dollar), "
        "instead of Gavel's T_jk / p_k.",
    )


def solve_linear(
    problem: ClusterArrays, ctx: SolveContext, weight: FloatArray, name: str
) -> tuple[Status, FloatArray, list[str], int | None]:
    """Maximize Σ_jk weight_jk X_jk over the base constraints; weight is 0 where unusable."""
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    active = np.flatnonzero(problem.eligible.any(axis=1))
    if active.size == 0:
        return Status.OPTIMAL, allocation, [], None
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
    solution = ctx.solve(model, method)
    merged = groups.size if merge else None
    if not solution.status.has_solution:
        return solution.status, allocation, [], merged
    allocation[active] = x.dense(solution.value(x.block))[groups.inverse]
    allocation, repair = repair_allocation(allocation, problem.scale_factor, problem.gpu_count)
    if repair > REPAIR_TOLERANCE:
        warning = f"solver answer violated constraints by {repair:.2e}; scaled back"
        return Status.FEASIBLE, allocation, [warning], merged
    return solution.status, allocation, [], merged


def _outcome(
    problem: ClusterArrays,
    ctx: SolveContext,
    weight: FloatArray,
    name: str,
    objective_name: str,
) -> Outcome:
    status, allocation, warnings, merged = solve_linear(problem, ctx, weight, name)
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
    )


def run_max_throughput(
    snapshot: Snapshot, problem: ClusterArrays, options: MaxThroughputOptions, ctx: SolveContext
) -> Outcome:
    weight = problem.throughput
    label = "total throughput (steps/s)"
    if options.normalized:
        prop = problem.equal_share_throughput
        weight = np.divide(
            weight, prop[:, None], out=np.zeros_like(weight), where=prop[:, None] > 0
        )
        label = "total normalized throughput Σ eff_j / prop_j"
    return _outcome(problem, ctx, weight, "max_total_throughput", label)


def run_per_dollar(
    snapshot: Snapshot, problem: ClusterArrays, options: PerDollarOptions, ctx: SolveContext
) -> Outcome:
    usable = np.asarray(problem.eligible.any(axis=0), dtype=bool)
    require_prices(problem, usable, PER_DOLLAR_NAME, positive=True)
    price = np.where(usable, problem.price_per_hour, 1.0)
    weight = problem.throughput / price[None, :]
    label = "Σ_jk T_jk X_jk / p_k (steps/s per dollar-per-GPU-hour)"
    if options.gang_price:
        weight = weight / problem.scale_factor[:, None]
        label = "Σ_jk T_jk X_jk / (s_j p_k) (steps per dollar)"
    return _outcome(problem, ctx, weight, PER_DOLLAR_NAME, label)


PER_DOLLAR_NAME = "throughput_per_dollar"

MAX_THROUGHPUT: Policy = Policy(
    name="max_total_throughput",
    summary="Maximize the sum of effective throughputs Σ_j eff_j (optionally over prop_j).",
    options=MaxThroughputOptions,
    run=run_max_throughput,
    aliases=("max_throughput", "throughput"),
)

PER_DOLLAR: Policy = Policy(
    name=PER_DOLLAR_NAME,
    summary="Maximize throughput per dollar Σ_jk T_jk X_jk / p_k (prices per GPU-hour).",
    options=PerDollarOptions,
    run=run_per_dollar,
    aliases=("max_throughput_per_dollar", "cost_efficiency"),
)
