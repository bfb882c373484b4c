"""The spare-capacity stage of makespan and finish-time fairness (FORMULATIONS §2a).

The first stage fixes one number, the makespan M* or the largest finish-time ratio ρ*, and any
allocation meeting it is optimal: a simplex vertex typically gives every job just what it needs
and leaves the rest of the cluster idle. The second stage keeps every job's demand at the
optimum and gives the rest of the cluster away by total normalized throughput:

    maximize    Σ_j Σ_k (T_jk / prop_j) X_jk          prop_j = Σ_k T_jk N_k / C
    subject to  Σ_k T_jk X_jk ≥ d_j                   ∀j   (d_j: the demand at M* or ρ*)
                base constraints

Every job still finishes by M* (its ratio stays at most ρ*), and the answer is Pareto-efficient
among the allocations that do: one that raised a job's throughput without lowering another's
would keep every demand and have a larger total. So no type is left idle while a job with work
left and spare time could run on it. Coefficients are equal within a class of jobs (same
throughput row), so the demand engine solves it over the first stage's groups, exactly, and
hands each group's time above its demands to its members (`split_groups`, `keep_surplus`).
Makespan runs it as the second stage of its own θ target (`Target.then_value`: θ fixed at θ*,
warm from the first vertex); finish-time fairness, whose last LP holds tangents rather than the
demands at ρ*, as a model of its own (`fill_spare`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from apportion.formulations.objectives.demand import (
    DemandJobs,
    DemandResult,
    Target,
    initial_groups,
    solve_demand_lp,
)
from apportion.solver.arraytypes import FloatArray
from apportion.solver.context import SolveContext
from apportion.solver.model import Sense


def normalized_value(throughput: FloatArray, capacity: FloatArray) -> FloatArray:
    """T_jk / prop_j, Gavel's normalization: what a unit of time on k is worth to job j against
    its throughput on the cluster-average mix of types."""
    prop = throughput @ capacity / max(float(capacity.sum()), 1e-300)
    out: FloatArray = throughput / np.where(prop > 0, prop, 1.0)[:, None]
    return out


def fill_spare(jobs: DemandJobs, ctx: SolveContext) -> DemandResult:
    """The second stage as a model of its own: every job at least its demand (`jobs.offset`;
    the slope is not read), the rest of the cluster by total normalized throughput. (A θ
    target runs it on its own session instead: `Target.then_value`.)"""
    floors = replace(jobs, slope=np.zeros_like(jobs.offset))
    value = normalized_value(jobs.throughput, jobs.capacity)
    group = initial_groups(floors, ctx.options.merge_identical, None)
    return solve_demand_lp(floors, Target(Sense.MAXIMIZE, value=value), ctx, group)
