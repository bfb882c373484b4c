"""Minimum cost subject to SLOs (FORMULATIONS §4).

A job with a deadline (absolute seconds on the snapshot's clock `now`) and R_j steps left needs
the effective throughput d_j = R_j / (deadline_j − now). With p_k the price per GPU-hour:

    minimize    Σ_k p_k Σ_j s_j X_jk                 (dollars per hour while X holds)
    subject to  Σ_k T_jk X_jk ≥ d_j   ∀j with a deadline,   base constraints

Jobs without a deadline get no time: any time given to them only adds cost (use a throughput or
fairness policy to share the rest). A snapshot in which no job has a deadline is an input error
(422, CLI exit 2) naming the field: its only answer, nothing for anyone at no cost, would say
nothing the caller asked. This LP is solved exactly over groups of similar jobs
(`formulations.objectives.demand`; the demands are known, so one grouping is exact at once).

When the SLOs cannot all be met, the answer says which can: jobs that cannot meet theirs even alone
(deadline passed, or d_j above their fastest usable throughput) are set aside, then two MILPs
(`formulations.objectives.slo_milp`) maximize the number of SLOs met (or their total weight, option
`maximize="weight"`) and, among all sets of that value, minimize the cost. Jobs whose SLO is given
up get no time and are named in `summary.slo_missed`, with the reason on each job.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from apportion.formulations.allocation import repair_allocation
from apportion.formulations.inputs import require_job_field, require_now, require_prices
from apportion.formulations.objectives.demand import (
    DemandJobs,
    Target,
    initial_groups,
    solve_demand_lp,
)
from apportion.formulations.objectives.slo_milp import Candidates, choose
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Feature, Solution
from apportion.solver.context import SolveContext
from apportion.solver.errors import InputError
from apportion.solver.model import Sense
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "min_cost_slo"
SLO_TOLERANCE = 1e-6  # relative shortfall of eff_j below d_j still counted as met (round-off)
BEST_EFFORT = "no deadline: the cheapest allocation gives jobs without an SLO no time"
NO_DEADLINE = (
    "no job has a deadline: the min_cost_slo policy needs one on each job with an SLO "
    "(jobs[].deadline, on the clock of the snapshot's now); without any, the cheapest "
    "allocation is no allocation at all"
)
GIVEN_UP = (
    "SLO given up: not every SLO fits, and the SLOs met are the most (by count or weight) "
    "at the least cost"
)


class MinCostSloOptions(PolicyOptions):
    maximize: Literal["count", "weight"] = Field(
        "count",
        description="When not every SLO can be met: maximize how many are met, or their total "
        "weight (job weights); then minimize the cost among those choices.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MinCostSloOptions, ctx: SolveContext
) -> Outcome:
    slo = np.flatnonzero(~np.isnan(problem.deadline))
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    reasons = {int(j): BEST_EFFORT for j in np.flatnonzero(np.isnan(problem.deadline))}
    reasons.update(problem.unplaceable_reasons())
    required = np.full(problem.num_jobs, np.nan)
    if slo.size == 0:
        if problem.num_jobs:
            raise InputError.single(("snapshot", "jobs"), NO_DEADLINE, "missing")
        outcome = _outcome(problem, Status.OPTIMAL, allocation, reasons, required, slo, [])
        return _explained(outcome, problem, required, slo, slo, options, ctx)

    require_job_field(problem, problem.steps_remaining, slo, "steps_remaining", NAME)
    now = require_now(problem, NAME)
    require_prices(problem, np.asarray(problem.eligible[slo].any(axis=0), dtype=bool), NAME)
    left = problem.deadline[slo] - now
    steps = problem.steps_remaining[slo]
    # A deadline already passed has no finite requirement (reported as null).
    required[slo] = np.where(steps <= 0, 0.0, steps / np.where(left > 0, left, np.nan))
    lost = _unreachable(problem, slo, left, required, reasons)
    candidates = slo[(steps > 0) & ~np.isin(slo, lost)]
    for j in slo[steps <= 0]:
        reasons[int(j)] = "no steps remaining: SLO met"

    status, x, gap, groups, solved = _solve(problem, candidates, required, options, ctx)
    warnings: list[str] = []
    if not status.has_solution:
        failed = _outcome(problem, status, allocation, reasons, required, slo, warnings)
        return failed.but(solution=solved)
    allocation[candidates] = x
    allocation, repair = repair_allocation(allocation, problem.scale_factor, problem.gpu_count)
    if repair > SLO_TOLERANCE:
        status = Status.FEASIBLE
        warnings.append(f"solver answer violated constraints by {repair:.2e}; scaled back")
    outcome = _outcome(problem, status, allocation, reasons, required, slo, warnings)
    merged = groups if ctx.options.merge_identical else None
    outcome = outcome.summarized(mip_gap=gap).but(merged_groups=merged, solution=solved)
    return _explained(outcome, problem, required, lost, candidates, options, ctx)


def _explained(
    outcome: Outcome,
    problem: ClusterArrays,
    required: FloatArray,
    lost: IntArray,
    candidates: IntArray,
    options: MinCostSloOptions,
    ctx: SolveContext,
) -> Outcome:
    """The outcome with its evidence when an explanation is asked for (it costs a MILP per SLO
    given up, so only then)."""
    if not ctx.options.explain:
        return outcome
    from apportion.formulations.objectives.min_cost_slo_evidence import SloAnswer, slo_evidence

    counting = options.maximize == "count"
    met = np.array([flag is True for flag in outcome.job_metrics["slo_met"]], dtype=bool)
    answer = SloAnswer(
        outcome.allocation,
        required,
        met,
        lost,
        dict(outcome.reasons),
        candidates,
        np.ones(candidates.size) if counting else problem.weight[candidates],
        counting,
    )
    return outcome.but(evidence=slo_evidence(problem, answer, ctx))


def _unreachable(
    problem: ClusterArrays,
    slo: IntArray,
    left: FloatArray,
    required: FloatArray,
    reasons: dict[int, str],
) -> IntArray:
    """SLO jobs that cannot meet their deadline even alone on the cluster, with the reason."""
    fastest = np.where(problem.eligible[slo], problem.throughput[slo], 0.0).max(axis=1)
    steps = problem.steps_remaining[slo]
    lost = []
    for i, j in enumerate(slo):
        if steps[i] <= 0:
            continue
        if left[i] <= 0:
            reasons[int(j)] = "SLO cannot be met: the deadline has passed"
        elif fastest[i] <= 0:
            reasons[int(j)] = f"SLO cannot be met: {reasons[int(j)]}"
        elif required[j] > fastest[i] * (1 + SLO_TOLERANCE):  # as a met SLO is judged
            reasons[int(j)] = (
                f"SLO cannot be met: needs {required[j]:.6g} steps/s, at most {fastest[i]:.6g} "
                "on its fastest usable type"
            )
        else:
            continue
        lost.append(int(j))
    return np.array(lost, dtype=np.int64)


def _solve(
    problem: ClusterArrays,
    candidates: IntArray,
    required: FloatArray,
    options: MinCostSloOptions,
    ctx: SolveContext,
) -> tuple[Status, FloatArray, float | None, int, Solution | None]:
    """All candidates' SLOs in one LP; if that is infeasible, the best subset by MILP.

    Returns the status, the candidates' allocation, the MILP gap (if any), the group count and
    the solve whose answer was taken.
    """
    if candidates.size == 0:
        return Status.OPTIMAL, np.zeros((0, problem.num_types)), None, 0, None
    usable = np.where(problem.eligible[candidates], problem.throughput[candidates], 0.0)
    price = np.nan_to_num(problem.price_per_hour, nan=0.0)
    labels = [problem.job_ids[j] for j in candidates]
    jobs = DemandJobs(
        usable,
        problem.scale_factor[candidates],
        problem.gpu_count,
        offset=required[candidates],
        slope=np.zeros(candidates.size),
        labels=labels,
        gpu_names=problem.gpu_names,
    )
    group = initial_groups(jobs, ctx.options.merge_identical, None)
    result = solve_demand_lp(jobs, Target(Sense.MINIMIZE, gpu_price=price), ctx, group)
    if result.status is not Status.INFEASIBLE:
        return result.status, result.allocation, None, result.num_groups, result.solution
    counting = options.maximize == "count"
    value = np.ones(candidates.size) if counting else problem.weight[candidates]
    chosen = choose(
        Candidates(
            usable,
            problem.scale_factor[candidates],
            required[candidates],
            value,
            labels,
            problem.gpu_count,
            price,
            problem.gpu_names,
        ),
        counting,
        ctx,
    )
    return chosen.status, chosen.allocation, chosen.mip_gap, chosen.groups, chosen.solution


def _outcome(
    problem: ClusterArrays,
    status: Status,
    allocation: FloatArray,
    reasons: dict[int, str],
    required: FloatArray,
    slo: IntArray,
    warnings: list[str],
) -> Outcome:
    eff = np.einsum("jk,jk->j", problem.throughput, allocation)
    has_slo = ~np.isnan(problem.deadline)
    met = has_slo & (eff >= required * (1 - SLO_TOLERANCE)) & status.has_solution
    missed = slo[~met[slo]]
    for j in missed:
        reasons.setdefault(int(j), GIVEN_UP)
    used = problem.scale_factor @ allocation
    cost = float(np.nansum(problem.price_per_hour * used)) if status.has_solution else None
    now = problem.now if problem.now is not None else np.nan
    finish = np.divide(problem.steps_remaining, eff, out=np.full(eff.size, np.inf), where=eff > 0)
    names = [problem.job_ids[j] for j in missed]
    if missed.size and status.has_solution:
        shown = ", ".join(names[:10]) + (" …" if len(names) > 10 else "")
        warnings.append(f"{missed.size} of {slo.size} SLOs cannot be met together: {shown}")
    return Outcome(
        status,
        cost,
        "cost per hour",
        allocation,
        reasons,
        job_metrics={
            "required_throughput": required,
            "slo_met": _flags(met, has_slo),
            "finish_time": np.where(has_slo & (eff > 0), now + finish, np.nan),
        },
        summary={
            "cost_per_hour": cost,
            "slo_jobs": int(slo.size),
            "slo_met": int(met.sum()),
            "slo_missed": names,
        },
        warnings=warnings,
    )


def _flags(values: NDArray[np.bool_], where: NDArray[np.bool_]) -> NDArray[np.object_]:
    out = np.full(values.size, None, dtype=object)
    out[where] = values[where]
    return out


POLICY = Policy(
    name=NAME,
    summary="Minimize the price of the GPUs used subject to every job meeting its deadline; when "
    "not all can, meet the most (or most valuable) SLOs, then minimize cost.",
    options=MinCostSloOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
)
