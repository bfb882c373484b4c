"""Minimum makespan, exact in one LP (FORMULATIONS §2).

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

Each job's finish time under X is R_j / eff_j(X) ≤ M. Jobs with no steps remaining need nothing;
jobs that can run nowhere never finish: they are reported and the makespan covers the others.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.allocation import repair_allocation
from apportion.formulations.inputs import require_job_field
from apportion.formulations.objectives.demand import (
    DemandJobs,
    Target,
    initial_groups,
    solve_demand_lp,
)
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.model import Sense
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "makespan"
CERTIFY_TOLERANCE = 1e-6


class MakespanOptions(PolicyOptions):
    """The makespan policy has no options of its own."""


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MakespanOptions, ctx: SolveContext
) -> Outcome:
    everyone = np.arange(problem.num_jobs)
    require_job_field(problem, problem.steps_remaining, everyone, "steps_remaining", NAME)
    steps = problem.steps_remaining
    reasons = problem.unplaceable_reasons()
    done = steps <= 0
    for j in np.flatnonzero(done):
        reasons[int(j)] = "no steps remaining"
    active = np.flatnonzero(problem.eligible.any(axis=1) & ~done)
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    finish = np.where(done, 0.0, np.nan)
    warnings = _never_finish_warning(problem, reasons, done)
    if active.size == 0:
        return _outcome(Status.OPTIMAL, 0.0, allocation, reasons, finish, warnings, {})

    jobs, horizon, guess = _demand_jobs(problem, active)
    groups = initial_groups(jobs, ctx.options.merge_identical, guess)
    result = solve_demand_lp(jobs, Target(Sense.MAXIMIZE, theta_bounds=(0.0, 1.0)), ctx, groups)
    summary: dict[str, object] = {"grouping_rounds": result.rounds}
    merged = result.num_groups if ctx.options.merge_identical else None
    if not result.status.has_solution or not result.theta:
        return _outcome(result.status, None, allocation, reasons, finish, warnings, summary, merged)

    allocation[active] = result.allocation
    allocation, repair = repair_allocation(allocation, problem.scale_factor, problem.gpu_count)
    eff = np.einsum("jk,jk->j", problem.throughput[active], allocation[active])
    finish[active] = np.divide(steps[active], eff, out=np.full(active.size, np.inf), where=eff > 0)
    makespan = float(finish[active].max())
    lower = horizon / result.theta
    summary.update(makespan=makespan, lower_bound=lower)
    status = result.status
    if repair > CERTIFY_TOLERANCE or makespan > lower * (1 + CERTIFY_TOLERANCE):
        status = Status.FEASIBLE
        warnings.append(
            f"allocation finishes at {makespan:.9g} s, the LP bound is {lower:.9g} s; "
            "reported as feasible"
        )
    return _outcome(status, makespan, allocation, reasons, finish, warnings, summary, merged)


def _demand_jobs(problem: ClusterArrays, active: np.ndarray) -> tuple[DemandJobs, float, float]:
    """Demands R_j θ / L with L the horizon (longest job alone), and a first guess of θ = L/M."""
    steps = problem.steps_remaining[active]
    usable = np.where(problem.eligible[active], problem.throughput[active], 0.0)
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
    stuck = [problem.job_ids[j] for j in reasons if not done[j]]
    if not stuck:
        return []
    shown = ", ".join(stuck[:5]) + (" …" if len(stuck) > 5 else "")
    return [
        f"{len(stuck)} job(s) can run nowhere and never finish ({shown}); "
        "the makespan covers the others"
    ]


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
