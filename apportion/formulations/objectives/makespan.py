"""Minimum makespan, exact in one LP (FORMULATIONS §2), then spare capacity (§2a).

With u = 1/M (M the time by which every job is done) and X the time fractions:

    maximize    u
    subject to  Σ_k T_jk X_jk ≥ R_j u                ∀j   (job j finishes by M)
                Σ_k X_jk ≤ 1                        ∀j
                Σ_j s_j X_jk ≤ N_k                   ∀k
                X ≥ 0 where job j can run on k

This is the time-expanded LP (minimize M s.t. Σ_k T_jk Z_jk ≥ R_j, Σ_k Z_jk ≤ M, Σ_j s_j Z_jk ≤ N_k
M) with X = Z/M: a fluid schedule that keeps X for M seconds finishes every job, and no schedule
finishes sooner. u is scaled by L = max_j R_j / max_k T_jk (no job can finish before L), so θ = L·u
lies in [0, 1]. Solved over groups of similar jobs (`formulations.objectives.demand`); the answer is
certified: the LP bound and the makespan the returned X really achieves must agree to 1e-6, else the
status is `feasible` with a warning.

Any X meeting R_j u* is optimal, and the LP's vertex gives most jobs just that, leaving GPUs idle.
With `pareto` (the default) a second LP keeps every job finishing by M* and gives the rest of the
cluster by total normalized throughput, Σ_jk (T_jk / prop_j) X_jk (`formulations.objectives.spare`).

Heterogeneity-agnostic (`heterogeneity_aware=false`, Gavel's agnostic makespan baseline): the LP
plans with one throughput per job on every type it may use (`formulations.objectives.agnostic`);
`finish_time` is then each job's at its true throughputs, while the objective and its bound are
the plan's.

Robust (`uncertainty`, or jobs' `throughput_uncertainty`, §1f): with T'_jk ∈ [T^lo_jk, T^hi_jk],
X ≥ 0 makes Σ_k T'_jk X_jk ≥ Σ_k T^lo_jk X_jk, so the LP over T^lo is the exact robust
counterpart: every job finishes by its M for every T' in the box, and `finish_time` is then
each job's worst case, R_j / Σ_k T^lo_jk X_jk.

Each job's finish time under X is R_j / eff_j(X) ≤ M. Jobs with no steps remaining need nothing;
jobs that can run nowhere never finish: they are reported and the makespan covers the others.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from apportion.formulations.allocation import repair_allocation
from apportion.formulations.inputs import require_job_field
from apportion.formulations.objectives.agnostic import (
    AgnosticDefinition,
    check_reference_type,
    planned_throughput,
)
from apportion.formulations.objectives.demand import (
    DemandJobs,
    Target,
    initial_groups,
    solve_demand_lp,
)
from apportion.formulations.objectives.spare import normalized_value
from apportion.formulations.uncertainty import uncertainty_matrix
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.context import SolveContext
from apportion.solver.errors import InputError
from apportion.solver.model import Sense
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "makespan"
CERTIFY_TOLERANCE = 1e-6
GUARANTEE = (
    "every job finishes by its finish_time (at most the makespan) for every throughput within "
    "the stated uncertainty"
)


class MakespanOptions(PolicyOptions):
    pareto: bool = Field(
        True,
        description="With every job still finishing by the optimal makespan, give the rest of "
        "the cluster to the jobs by total normalized throughput, so no usable GPU stays idle; "
        "false returns the first optimum, whichever the solver found.",
    )
    heterogeneity_aware: bool = Field(
        True,
        description="Use per-type throughputs; false plans with one throughput per job on "
        "every type it may use (Gavel's agnostic makespan) and reports finish times at the "
        "true throughputs.",
    )
    agnostic_definition: AgnosticDefinition = Field(
        "usable",
        description="With heterogeneity_aware=false: usable (time only on types the job runs "
        "on) or gavel (every type its gang fits, including types where it makes no progress).",
    )
    reference_type: str | None = Field(
        None,
        description="With heterogeneity_aware=false: the GPU type whose throughput the plan "
        "assumes everywhere (Gavel: v100); unset, or a job with none there, each job's mean "
        "over the cluster's GPUs of the types it can use.",
    )
    uncertainty: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Relative error bound δ of every throughput a job does not bound itself "
        "(`throughput_uncertainty`): plan for the worst case T·(1−δ), so every job finishes by "
        "the makespan whatever its true throughputs within the bounds.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MakespanOptions, ctx: SolveContext
) -> Outcome:
    everyone = np.arange(problem.num_jobs)
    require_job_field(problem, problem.steps_remaining, everyone, "steps_remaining", NAME)
    aware = options.heterogeneity_aware
    check_reference_type(problem, aware, options.reference_type)
    problem, robust = _worst_case(snapshot, problem, options)  # robust: its summary entries
    plan = planned_throughput(problem, aware, options.agnostic_definition, options.reference_type)
    steps = problem.steps_remaining
    reasons = problem.unplaceable_reasons()
    done = steps <= 0
    for j in np.flatnonzero(done):
        reasons[int(j)] = "no steps remaining"
    active = np.flatnonzero((plan > 0).any(axis=1) & ~done)
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    finish = np.where(done, 0.0, np.nan)
    warnings = _never_finish_warning(problem, reasons, done)
    if active.size == 0:
        return _outcome(Status.OPTIMAL, 0.0, allocation, reasons, finish, warnings, dict(robust))

    jobs, horizon, guess = _demand_jobs(problem, plan, active)
    groups = initial_groups(jobs, ctx.options.merge_identical, guess)
    value = normalized_value(jobs.throughput, jobs.capacity) if options.pareto else None
    target = Target(Sense.MAXIMIZE, theta_bounds=(0.0, 1.0), then_value=value)
    result = solve_demand_lp(jobs, target, ctx, groups)
    summary: dict[str, object] = {"grouping_rounds": result.rounds, **robust}
    merged = result.num_groups if ctx.options.merge_identical else None
    if not result.status.has_solution or not result.theta:
        failed = _outcome(
            result.status, None, allocation, reasons, finish, warnings, summary, merged
        )
        return failed.but(solution=result.solution)

    lower = horizon / result.theta
    if result.second not in (None, Status.OPTIMAL):
        warnings.append(
            f"the spare-capacity stage ended with status {result.second}; "
            "the first optimum is returned"
        )
    x, makespan, repair = _repaired(problem, jobs, result.allocation, active)
    allocation[active] = x
    true = np.einsum("jk,jk->j", problem.throughput[active], x)
    finish[active] = np.divide(
        steps[active], true, out=np.full(active.size, np.nan), where=true > 0
    )
    summary.update(makespan=makespan, lower_bound=lower)
    if not aware:
        summary["makespan_at_true_throughputs"] = _at_true(finish[active])
        warnings += _no_progress_warning(problem, active, true)
    status = result.status
    if repair > CERTIFY_TOLERANCE or makespan > lower * (1 + CERTIFY_TOLERANCE):
        status = Status.FEASIBLE
        warnings.append(
            f"allocation finishes at {makespan:.9g} s, the LP bound is {lower:.9g} s; "
            "reported as feasible"
        )
    answer = _outcome(status, makespan, allocation, reasons, finish, warnings, summary, merged)
    return answer.but(solution=result.solution)


def _worst_case(
    snapshot: Snapshot, problem: ClusterArrays, options: MakespanOptions
) -> tuple[ClusterArrays, dict[str, str]]:
    """The problem at T^lo = T (1 − δ) when any bound is given, and what the answer then
    guarantees (its summary entry; none without bounds)."""
    delta, own = uncertainty_matrix(snapshot, problem, options.uncertainty)
    if not (own or options.uncertainty > 0):
        return problem, {}
    if not options.heterogeneity_aware:
        raise InputError.single(
            ("options", "uncertainty"),
            "throughput bounds need measured throughputs: not available with "
            "heterogeneity_aware=false",
        )
    worst = replace(problem, throughput=problem.throughput * (1.0 - delta))
    return worst, {"guarantee": GUARANTEE}


def _repaired(
    problem: ClusterArrays, jobs: DemandJobs, x: FloatArray, active: NDArray[np.int64]
) -> tuple[FloatArray, float, float]:
    """X made exactly feasible, the makespan it achieves under the plan's throughputs, and the
    largest relative repair that took."""
    x, repair = repair_allocation(x, problem.scale_factor[active], problem.gpu_count)
    eff = np.einsum("jk,jk->j", jobs.throughput, x)
    steps = problem.steps_remaining[active]
    finish = np.divide(steps, eff, out=np.full(active.size, np.inf), where=eff > 0)
    return x, float(finish.max()), repair


def _at_true(finish: FloatArray) -> float | None:
    """The makespan at the jobs' true throughputs; None when a job makes no progress."""
    return None if np.isnan(finish).any() else float(finish.max())


def _no_progress_warning(
    problem: ClusterArrays, active: NDArray[np.int64], true: FloatArray
) -> list[str]:
    return _about_jobs(
        problem,
        active[true <= 0].tolist(),
        "get time only on types where they make no progress ({}); they never finish under this "
        "plan",
    )


def _about_jobs(problem: ClusterArrays, jobs: list[int], what: str) -> list[str]:
    """ "N job(s) <what>", the first few ids in its braces; nothing when there are none."""
    if not jobs:
        return []
    ids = [problem.job_ids[j] for j in jobs]
    shown = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
    return [f"{len(ids)} job(s) " + what.format(shown)]


def _demand_jobs(
    problem: ClusterArrays, plan: FloatArray, active: NDArray[np.int64]
) -> tuple[DemandJobs, float, float]:
    """Demands R_j θ / L with L the horizon (longest job alone), and a first guess of θ = L/M."""
    steps = problem.steps_remaining[active]
    usable = plan[active]
    alone = steps / usable.max(axis=1)  # each job alone, all the time on its fastest type
    horizon = float(alone.max())
    jobs = DemandJobs(
        throughput=usable,
        scale=problem.scale_factor[active],
        capacity=problem.gpu_count,
        offset=np.zeros(active.size),
        slope=steps / horizon,
        labels=[problem.job_ids[j] for j in active],
        gpu_names=problem.gpu_names,
    )
    # M ≥ the GPU-seconds every job needs at the least, over the cluster's GPUs.
    load = float((problem.scale_factor[active] * alone).sum() / problem.gpu_count.sum())
    return jobs, horizon, horizon / max(horizon, load)


def _never_finish_warning(
    problem: ClusterArrays, reasons: dict[int, str], done: np.ndarray
) -> list[str]:
    stuck = [j for j in reasons if not done[j]]
    return _about_jobs(
        problem, stuck, "can run nowhere and never finish ({}); the makespan covers the others"
    )


def _outcome(
    status: Status,
    makespan: float | None,
    allocation: np.ndarray,
    reasons: dict[int, str],
    finish: np.ndarray,
    warnings: list[str],
    summary: dict[str, object],
    merged: int | None = None,
) -> Outcome:
    return Outcome(
        status,
        makespan,
        "makespan (s)",
        allocation,
        reasons,
        job_metrics={"finish_time": finish},
        summary=summary,
        warnings=warnings,
        merged_groups=merged,
    )


POLICY = Policy(
    name=NAME,
    summary="Minimize the time by which every job finishes (exact LP; finish time per job).",
    options=MakespanOptions,
    run=run,
)
