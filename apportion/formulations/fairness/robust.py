"""Robust max-min fairness: shares that hold for every throughput in a box, FORMULATIONS §1f.

The true throughputs are unknown within T'_jk ∈ [T^lo_jk, T^hi_jk] = [T_jk (1 − δ_jk),
T_jk (1 + δ_jk)] (`throughput_uncertainty` per job and type, the `uncertainty` option
elsewhere). What is guaranteed, by `reference`:

    box (default):  s_j Σ_k T'_jk X_jk / (w_j prop_j(T')) ≥ t*   for every T' in the box
                    (each job's share against its own true reference throughput);
    stated:         s_j Σ_k T'_jk X_jk / (w_j prop_j(T))  ≥ t*   for every T' in the box
                    (an absolute throughput, w_j t* prop_j(T) / s_j, reached at T' = T^lo).

`box` is the exact robust LP of `robust_lp.py` (the worst case of a ratio whose numerator and
normaliser share the unknowns). `stated` has no unknown in the normaliser: with X ≥ 0 the worst
case is T^lo, so it is the share LP of `share_lp.py` with T^lo in the share rows,

    maximize    t
    subject to  (s_g / prop_g(T)) Σ_k T^lo_gk X_gk ≥ w_g t          ∀g   (share, worst case)
                Σ_k X_gk ≤ 1  ∀g,   Σ_g n_g s_g X_gk ≤ N_k  ∀k,   X ≥ 0 where the job can run

with max-min's Pareto stage (§1d) on the worst-case shares. Both are max-min fairness at δ = 0.

Each job's `guaranteed_share` metric is the exact worst case of its share over the box under the
returned allocation (`formulations.uncertainty.worst_shares`; at least t*), and
`guaranteed_throughput` is Σ_k T^lo_jk X_jk; `normalized_share` stays the nominal one (at
T' = T). Space sharing is not offered: pair throughputs carry no uncertainty of their own.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import numpy as np
from pydantic import Field

from apportion.formulations.allocation import repair_allocation
from apportion.formulations.fairness.robust_lp import solve_exact
from apportion.formulations.fairness.run import solve_once
from apportion.formulations.fairness.share_input import Entities, ShareInput, share_input
from apportion.formulations.uncertainty import (
    reference_throughput,
    uncertainty_matrix,
    worst_shares,
)
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

OBJECTIVE = "minimum guaranteed normalized share"
CERTIFY_TOLERANCE = 1e-6


class RobustMaxMinOptions(PolicyOptions):
    uncertainty: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Relative error bound δ of every throughput a job does not bound itself "
        "(`throughput_uncertainty`): the true one lies in [T·(1−δ), T·(1+δ)].",
    )
    reference: Literal["box", "stated"] = Field(
        "box",
        description="What a share is measured against: box (each job's true equal-share "
        "throughput, whatever it is within the box) or stated (the snapshot's: a guaranteed "
        "absolute throughput).",
    )
    pareto: bool = Field(
        True,
        description="After the level is fixed, give what is left to the jobs that gain most "
        "(total worst-case share), every job at or above its level.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: RobustMaxMinOptions, ctx: SolveContext
) -> Outcome:
    delta, own = uncertainty_matrix(snapshot, problem, options.uncertainty)
    low, high = problem.throughput * (1.0 - delta), problem.throughput * (1.0 + delta)
    if options.reference == "box":
        return _stated(problem, _exact(problem, low, high, ctx, options), low, high, options)
    merge = ctx.options.merge_identical and not own
    prepared = robust_input(snapshot, problem, low, problem.throughput, merge=merge)
    outcome = solve_once(problem, prepared, ctx, options.pareto)
    return _stated(problem, outcome, low, None, options)


def _exact(
    problem: ClusterArrays,
    low: FloatArray,
    high: FloatArray,
    ctx: SolveContext,
    options: RobustMaxMinOptions,
) -> Outcome:
    """The exact robust LP's answer (`robust_lp`), made exactly feasible and certified: every
    placed job's exact worst-case share must reach the level it found."""
    answer = solve_exact(problem, low, high, ctx, options.pareto)
    x, repair = repair_allocation(answer.allocation, problem.scale_factor, problem.gpu_count)
    status, warnings = answer.status, []
    if repair > CERTIFY_TOLERANCE:
        warnings.append(f"solver answer violated constraints by {repair:.2e}; scaled back")
    placed = x.sum(axis=1) > 0
    worst = (problem.scale_factor / problem.weight) * worst_shares(x, low, high, problem.gpu_count)
    level = answer.level
    if level is not None and placed.any():
        # The objective is what the answer delivers: the Pareto floor and the repair may leave
        # it a rounding below the LP's level, more than that is reported.
        delivered = float(worst[placed].min())
        if level - delivered > CERTIFY_TOLERANCE * max(1.0, level):
            warnings.append(
                f"a job's guaranteed share is {level - delivered:.2e} below the level found"
            )
        level = min(level, delivered)
    if warnings and status is Status.OPTIMAL:
        status = Status.FEASIBLE
    return Outcome(
        status,
        level,
        OBJECTIVE,
        x,
        problem.unplaceable_reasons(),
        summary={"pareto": answer.pareto},
        warnings=warnings,
        solution=answer.solution,
        merged_groups=answer.merged_groups,
    )


def robust_input(
    snapshot: Snapshot,
    problem: ClusterArrays,
    low: FloatArray,
    ref: FloatArray,
    *,
    merge: bool,
) -> ShareInput:
    """The share structure over T^lo with gains s_g / prop^ref_g. Groups are keyed by T^lo, so
    they are merged only when every job has the same δ (then equal T^lo means equal T)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # a job with T^lo = 0 everywhere
        prepared = share_input(
            snapshot,
            problem,
            low,
            Entities.single(problem.num_jobs),
            merge=merge,
            # Time where the worst case makes no progress (δ = 1) guarantees nothing.
            eligible=problem.eligible & (low > 0),
        )
    s = prepared.structure
    if s is None:
        return prepared
    rep = s.groups.representative
    gain = s.scale / reference_throughput(ref[rep], problem.gpu_count)
    return replace(prepared, structure=replace(s, gain=gain))


def _stated(
    problem: ClusterArrays,
    outcome: Outcome,
    low: FloatArray,
    high: FloatArray | None,
    options: RobustMaxMinOptions,
) -> Outcome:
    """The answer with what it guarantees: per job the worst case over the box (`high` None:
    against the stated reference), and the nominal share in `normalized_share`."""
    x, n = outcome.allocation, problem.gpu_count
    per_weight = problem.scale_factor / problem.weight
    stated = reference_throughput(problem.throughput, n)
    positive = stated > 0
    nominal = np.zeros(problem.num_jobs)
    eff = np.einsum("jk,jk->j", problem.throughput, x)
    np.divide(per_weight * eff, stated, out=nominal, where=positive)
    worst_eff = np.einsum("jk,jk->j", low, x)
    if high is None:
        guaranteed = np.zeros(problem.num_jobs)
        np.divide(per_weight * worst_eff, stated, out=guaranteed, where=positive)
        against = "the snapshot's equal-share throughput prop_j(T)"
    else:
        guaranteed = per_weight * worst_shares(x, low, high, n)
        against = "the job's true equal-share throughput prop_j(T')"
    guarantee = (
        f"for every throughput T' within the stated uncertainty (default δ = "
        f"{options.uncertainty:g}), each job's share s_j·Σ_k T'_jk X_jk / (w_j·p) with p = "
        f"{against} is at least its guaranteed_share metric"
    )
    metrics = {
        **outcome.job_metrics,
        "guaranteed_share": guaranteed,
        "guaranteed_throughput": worst_eff,
    }
    summary = {**outcome.summary, "guarantee": guarantee, "reference": options.reference}
    return outcome.but(
        objective_name=OBJECTIVE,
        normalized_share=nominal,
        job_metrics=metrics,
        summary=summary,
    )


POLICY = Policy(
    name="robust_max_min",
    summary="Max-min fairness whose shares hold for every throughput within a relative "
    "uncertainty box.",
    options=RobustMaxMinOptions,
    run=run,
)
