"""Finish-time fairness (Themis, via Gavel), FORMULATIONS §3.

For job j with R_j steps left, t_j seconds since it started and t^iso_j isolated-equivalent seconds
of work done, the isolated share is x^iso_jk = (N_k/m)/s_j on every type it can use (m = jobs in
the LP), the row scaled down to sum ≤ 1, with throughput iso_j = Σ_k T_jk x^iso_jk (option
`isolated_share="gavel"`: Gavel's `isolated.py`, (N_k/m)/s_j on every type, usable or not, with
each row divided by max(1, its sum), i.e. x^iso_jk = N_k / max(m s_j, C)), and

    D_j = t^iso_j + R_j / iso_j          (finish time on the isolated share)
    ρ_j(X) = (t_j + R_j / eff_j(X)) / D_j = τ_j + r_j / eff_j(X),   τ_j = t_j/D_j,  r_j = R_j/D_j
    minimize max_j ρ_j(X)  subject to the base constraints.

ρ_j(X) ≤ ρ ⟺ eff_j(X) ≥ φ_j(ρ) = r_j/(ρ − τ_j): for a fixed ρ an LP feasibility problem. φ_j is
convex and decreasing, so its tangent at any ρ_k > τ_j lies below it, and

    minimize ρ  s.t.  eff_j(X) ≥ φ_j(ρ_k) + φ'_j(ρ_k)(ρ − ρ_k)  ∀j,  ρ ≥ L,  base constraints

is a relaxation (an LP with demands affine in ρ, solved by `formulations.objectives.demand`): its
optimum is a lower bound on ρ*, and its allocation X an upper bound max_j ρ_j(X). Each round cuts at
the best upper bound: Newton's method on the binding jobs, so the gap closes quadratically. L starts
at max_j (τ_j + r_j / max_k T_jk) (each job alone on its fastest type). The answer is the allocation
achieving the upper bound; status `optimal` needs upper − lower ≤ 1e-6·max(1, upper).

With `pareto` (the default), every job is then held at ρ_j ≤ ρ̄ (the upper bound), i.e.
eff_j ≥ φ_j(ρ̄), and the rest of the cluster goes by total normalized throughput
(`formulations.objectives.spare`): the minimax leaves GPUs idle as makespan's does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from apportion.formulations.allocation import repair_allocation
from apportion.formulations.inputs import require_job_field
from apportion.formulations.objectives.demand import (
    DemandJobs,
    Target,
    initial_groups,
    solve_demand_lp,
)
from apportion.formulations.objectives.spare import fill_spare
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext
from apportion.solver.model import Sense
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status, Termination, relative_gap

NAME = "finish_time_fairness"
TARGET_GAP = 1e-8  # stop refining here ...
OPTIMAL_GAP = 1e-6  # ... and call the answer optimal within this
MAX_ROUNDS = 40


class FinishTimeFairnessOptions(PolicyOptions):
    isolated_share: Literal["usable", "gavel"] = Field(
        "usable",
        description="The share ρ compares against: usable (1/m of each type the job can run "
        "on, at most all of its time) or gavel (Gavel's isolated policy: 1/m of every type, "
        "usable or not, each job's row scaled down to sum ≤ 1, as Gavel's isolated.py).",
    )
    pareto: bool = Field(
        True,
        description="With every job's ρ held at or below the optimal maximum, give the rest of "
        "the cluster by total normalized throughput, so no usable GPU stays idle; false "
        "returns the allocation the search ended on.",
    )


@dataclass(frozen=True)
class Fairness:
    """τ_j, r_j and D_j of the jobs in the LP (see the module docstring)."""

    tau: FloatArray
    rate: FloatArray
    isolated_time: FloatArray

    def rho(self, eff: FloatArray) -> FloatArray:
        safe = np.where(eff > 0, eff, 1.0)
        rho: FloatArray = np.where(eff > 0, self.tau + self.rate / safe, np.inf)
        return rho


def isolated_allocation(usable: FloatArray, scale: FloatArray, capacity: FloatArray) -> FloatArray:
    """x^iso: 1/m of every type the job can use, per GPU of its gang, at most all of the time.

    Feasible (each type is split m ways), so it also serves as the search's first upper bound.
    """
    m = usable.shape[0]
    share = np.where(usable > 0, (capacity / m)[None, :] / scale[:, None], 0.0)
    out: FloatArray = share / np.maximum(share.sum(axis=1, keepdims=True), 1.0)
    return out


def gavel_isolated_allocation(scale: FloatArray, capacity: FloatArray) -> FloatArray:
    """Gavel's x^iso: (N_k/m)/s_j on every type, each row divided by max(1, its own sum
    C/(m s_j)), which leaves N_k / max(m s_j, C) (m = len(scale))."""
    m = scale.size
    out: FloatArray = capacity[None, :] / np.maximum(m * scale, capacity.sum())[:, None]
    return out


def fairness_terms(
    problem: ClusterArrays, active: NDArray[np.int64], isolated_share: str = "usable"
) -> Fairness:
    scale = problem.scale_factor[active]
    if isolated_share == "gavel":
        # Every type counts, with the job's throughput there (0 where it cannot run).
        iso = np.einsum(
            "jk,jk->j",
            problem.throughput[active],
            gavel_isolated_allocation(scale, problem.gpu_count),
        )
    else:
        usable = np.where(problem.eligible[active], problem.throughput[active], 0.0)
        iso = np.einsum("jk,jk->j", usable, isolated_allocation(usable, scale, problem.gpu_count))
    steps = problem.steps_remaining[active]
    since = np.nan_to_num(problem.time_since_start[active], nan=0.0)
    done = np.nan_to_num(problem.isolated_time_done[active], nan=0.0)
    isolated_time = done + steps / iso
    return Fairness(since / isolated_time, steps / isolated_time, isolated_time)


def run(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: FinishTimeFairnessOptions,
    ctx: SolveContext,
) -> Outcome:
    everyone = np.arange(problem.num_jobs)
    require_job_field(problem, problem.steps_remaining, everyone, "steps_remaining", NAME)
    steps = problem.steps_remaining
    reasons = problem.unplaceable_reasons()
    for j in np.flatnonzero(steps <= 0):
        reasons[int(j)] = "no steps remaining"
    active = np.flatnonzero(problem.eligible.any(axis=1) & (steps > 0))
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    rho_all = np.full(problem.num_jobs, np.nan)
    if active.size == 0:
        return _outcome(Status.OPTIMAL, None, allocation, reasons, rho_all, [], {})

    terms = fairness_terms(problem, active, options.isolated_share)
    usable = np.where(problem.eligible[active], problem.throughput[active], 0.0)
    search = _newton(problem, active, usable, terms, ctx)
    warnings: list[str] = []
    if options.pareto:
        search = _spare(problem, active, usable, terms, search, ctx, warnings)
    allocation[active] = search.allocation
    rho_all[active] = search.rho
    upper, lower = float(search.rho.max()), search.lower
    gap = relative_gap(lower, upper, maximize=False)
    summary: dict[str, object] = {
        "max_rho": upper,
        "lower_bound": lower,
        "relative_gap": gap,
        "rounds": search.rounds,
    }
    status = search.status
    if search.stopped is not None:
        warnings.append(f"search stopped early: an LP ended with status {search.stopped}")
    if gap > OPTIMAL_GAP:
        status = Status.FEASIBLE
        warnings.append(f"max ρ {upper:.9g} is within {gap:.2e} of the lower bound {lower:.9g}")
    merged = search.groups if ctx.options.merge_identical else None
    answer = _outcome(status, upper, allocation, reasons, rho_all, warnings, summary, merged)
    # Why the search stopped: converged, an LP's own stop, or its round limit.
    why = Termination.OPTIMAL if status is Status.OPTIMAL else Termination.ITERATION_LIMIT
    if search.stopped is not None and search.last is not None:
        why = search.last.termination
    return answer.but(solution=search.last, termination=why)


@dataclass
class Search:
    status: Status
    allocation: FloatArray  # active jobs × types, the best found
    rho: FloatArray  # its ρ_j
    lower: float
    rounds: int
    groups: int
    stopped: Status | None = None  # the LP status that ended the search early, if any
    last: Solution | None = None  # the last tangent LP solved


def _newton(
    problem: ClusterArrays,
    active: NDArray[np.int64],
    usable: FloatArray,
    terms: Fairness,
    ctx: SolveContext,
) -> Search:
    """Tangent LPs at the best upper bound until the two bounds meet (module docstring)."""
    lower = float((terms.tau + terms.rate / usable.max(axis=1)).max())
    best = isolated_allocation(usable, problem.scale_factor[active], problem.gpu_count)
    best_rho = terms.rho(np.einsum("jk,jk->j", usable, best))
    upper = float(best_rho.max())
    labels = [problem.job_ids[j] for j in active]
    group = None
    status, rounds, groups, point = Status.OPTIMAL, 0, 0, upper
    stopped = None
    last = None
    while rounds < MAX_ROUNDS and upper - lower > TARGET_GAP * max(1.0, upper):
        rounds += 1
        jobs = _tangent(problem, active, usable, terms, labels, point)
        if group is None:
            group = initial_groups(jobs, ctx.options.merge_identical, point)
        result = solve_demand_lp(jobs, Target(Sense.MINIMIZE, (lower, np.inf)), ctx, group)
        last = result.solution
        if result.status is not Status.OPTIMAL:
            # No lower bound from this LP (a time-limited ρ is none); keep the best allocation,
            # which is feasible and whose gap is reported.
            status, stopped = Status.FEASIBLE, result.status
        if not result.status.has_solution or result.theta is None:
            break
        group, groups = result.group, result.num_groups
        if status is Status.OPTIMAL:
            lower = max(lower, result.theta)
        x, _ = repair_allocation(result.allocation, problem.scale_factor[active], problem.gpu_count)
        rho = terms.rho(np.einsum("jk,jk->j", usable, x))
        improved = float(rho.max()) < upper
        if improved:
            best, best_rho, upper = x, rho, float(rho.max())
        if status is not Status.OPTIMAL:
            break
        # Newton from the best upper bound; if that stalled, cut between the bounds instead.
        point = upper if improved else 0.5 * (lower + upper)
    return Search(status, best, best_rho, lower, rounds, groups, stopped, last)


def _spare(
    problem: ClusterArrays,
    active: NDArray[np.int64],
    usable: FloatArray,
    terms: Fairness,
    search: Search,
    ctx: SolveContext,
    warnings: list[str],
) -> Search:
    """The spare-capacity stage at ρ̄, the search's best maximum; its answer stays when the
    stage fails or would raise the maximum beyond the search's own target gap."""
    upper = float(search.rho.max())
    if not np.isfinite(upper):
        return search
    scale = problem.scale_factor[active]
    labels = [problem.job_ids[j] for j in active]
    floors = terms.rate / (upper - terms.tau)  # φ_j(ρ̄): eff_j ≥ it ⟺ ρ_j ≤ ρ̄
    jobs = DemandJobs(
        usable, scale, problem.gpu_count, floors, floors * 0, labels, problem.gpu_names
    )
    result = fill_spare(jobs, ctx)
    if result.status is not Status.OPTIMAL:
        warnings.append(f"the spare-capacity stage ended with status {result.status}; skipped")
        return search
    x, _ = repair_allocation(result.allocation, scale, problem.gpu_count)
    rho = terms.rho(np.einsum("jk,jk->j", usable, x))
    if float(rho.max()) > upper + TARGET_GAP * max(1.0, upper):
        warnings.append(f"the spare-capacity stage raised max ρ to {rho.max():.9g}; skipped")
        return search
    return replace(search, allocation=x, rho=rho)


def _tangent(
    problem: ClusterArrays,
    active: NDArray[np.int64],
    usable: FloatArray,
    terms: Fairness,
    labels: list[str],
    point: float,
) -> DemandJobs:
    """Demands φ_j(ρ_k) + φ'_j(ρ_k)(ρ − ρ_k), the tangents of r_j/(ρ − τ_j) at ρ_k = point."""
    gap = point - terms.tau
    slope = -terms.rate / gap**2
    return DemandJobs(
        usable,
        problem.scale_factor[active],
        problem.gpu_count,
        offset=terms.rate / gap - slope * point,
        slope=slope,
        labels=labels,
        gpu_names=problem.gpu_names,
    )


def _outcome(
    status: Status,
    objective: float | None,
    allocation: FloatArray,
    reasons: dict[int, str],
    rho: FloatArray,
    warnings: list[str],
    summary: dict[str, object],
    merged: int | None = None,
) -> Outcome:
    return Outcome(
        status,
        objective,
        "maximum finish-time ratio ρ",
        allocation,
        reasons,
        job_metrics={"rho": rho},
        summary=summary,
        warnings=warnings,
        merged_groups=merged,
    )


POLICY = Policy(
    name=NAME,
    summary="Minimize the largest finish-time ratio ρ_j (Themis): time to finish under the "
    "allocation over time on a 1/m isolated share (exact to 1e-6).",
    options=FinishTimeFairnessOptions,
    run=run,
    problem_class="LP sequence",
)
