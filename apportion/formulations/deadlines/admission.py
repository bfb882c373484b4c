"""Deadline admission with lease-based MILP and round-up placement (Chronus), FORMULATIONS §6.

Time is cut into leases of ℓ seconds; slot 0 starts now. For SLO jobs j (strict: one deadline
option, soft: several with values w_{j,v}), reserved size r_j = RU(g_j), L_j leases of work left
and M_{j,v} usable slots per option, the lease MILP (`formulations.deadlines.lease_milp`) is

    maximize Σ w_{j,v} s_{j,v}
    s.t.     Σ_t x_{j,t} = L_j Σ_v s_{j,v},  Σ_{t<M_{j,v}} x_{j,t} ≥ L_j s_{j,v},
             Σ_v s_{j,v} = 1 (guaranteed) / ≤ 1 (new),  Σ_j r_j x_{j,t} ≤ C,  x, s ∈ {0, 1}

so new SLO jobs are admitted jointly by value while every earlier guarantee is kept. If the MILP is
infeasible (a guarantee can no longer be kept) or returns nothing, the greedy packing of
`formulations.deadlines.lease_plan` answers with status `fallback` and names the broken guarantees.
σ then moves guaranteed work into or out of slot 0 without changing value. Jobs due in slot 0 run
now on rounded-up, consolidated placements; best-effort and unguaranteed SLO jobs fill the spare
GPUs by shortest remaining GPU-time first, then (optionally) guaranteed jobs not due this lease.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from apportion.formulations.deadlines import report as deadline_report
from apportion.formulations.deadlines.decision import Admission
from apportion.formulations.deadlines.guarantees import fewest_broken
from apportion.formulations.deadlines.lease_plan import (
    LeasePlan,
    greedy_plan,
    keep_running,
    shift,
)
from apportion.formulations.deadlines.lease_search import solve_lease_milp
from apportion.formulations.deadlines.lending import run_now
from apportion.formulations.deadlines.one_by_one import arrivals, one_by_one
from apportion.formulations.deadlines.pricing import weighted
from apportion.formulations.deadlines.problem import LeaseProblem, lease_problem
from apportion.formulations.deadlines.uncertain import margins
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

Objective = Literal["satisfaction", "value"]

#: Defaults when the request sets no limit: they keep a Philly-scale request (120 nodes, 400 SLO
#: jobs × 72 slots, 1,000 best-effort jobs) within a few seconds (the `deadlines` bench rows).
#: An answer within the default gap but short of its bound is `feasible` (`lease_search`).
DEFAULT_TIME_LIMIT = 3.0
DEFAULT_MIP_GAP = 0.01


class DeadlineOptions(PolicyOptions):
    objective: Objective = Field(
        "satisfaction",
        description="What admission maximizes. satisfaction (the default, for a scheduler that "
        "calls it over time): Chronus's schedule_summary metric, each guaranteed job's value ÷ "
        "its best value, less `lease_price` per GPU-lease it reserves (those leases run ahead "
        "of the jobs without a guarantee); value: Chronus's Σ of the values guaranteed, values "
        "ranking jobs against each other. Either is solved to mip_gap (default 1 %): the "
        "status is optimal only when the gap is closed; send mip_gap 0 for the proven optimum.",
    )
    lease_price: float = Field(
        0.05,
        ge=0,
        le=1,
        description="satisfaction objective: share of a job's best value its guarantee costs "
        "per GPU-lease reserved (0: none; 0.05: a guarantee that reserves 20 GPU-leases or "
        "more is not worth giving, the job runs without one).",
    )
    admission: Literal["joint", "one_by_one"] = Field(
        "joint",
        description="joint: new SLO jobs are admitted together by the lease MILP; one_by_one: "
        "Chronus's own rule (a baseline): each job once, in the call at its arrival_time "
        "(every call without one), in snapshot order, at its first option only, if a greedy "
        "packing of it and the jobs admitted before it in the call fits whole leases from "
        "the next boundary.",
    )
    sigma: Literal[-1, 0, 1, "adaptive"] = Field(
        "adaptive",
        description="σ: +1 runs guaranteed work as early as the plan allows, −1 as late (leaving "
        "this lease to others), 0 as planned; adaptive = −1 when best-effort or unguaranteed "
        "jobs wait, else +1. Applied after value: it never changes what is admitted.",
    )
    overhead_seconds: float = Field(
        0.0,
        ge=0,
        description="Checkpoint/restore seconds lost per lease when counting leases, for jobs "
        "that do not give their own `overhead_seconds`.",
    )
    safety_margin: float = Field(
        0.0,
        ge=0,
        le=10,
        description="Stretch remaining-time estimates by this share before counting leases "
        "(the Chronus artifact uses 0.1): room for estimates that run long, at the price of "
        "fewer guarantees.",
    )
    uncertainty: float = Field(
        0.0,
        ge=0,
        le=10,
        description="Relative error bound δ of the remaining time of every job that does not "
        "give its own (`remaining_time_uncertainty`): guarantees are planned for the longest "
        "remaining time within the bound, E·(1+δ), so they hold for every one within it.",
    )
    horizon_slots: int = Field(
        288, ge=1, le=10_000, description="Slots planned ahead; later deadlines count as this."
    )
    fill_guaranteed: bool = Field(
        True, description="Guaranteed jobs not due this lease may use GPUs left idle."
    )
    split_best_effort: bool = Field(
        True, description="Spread a non-guaranteed job over nodes when no node fits it whole."
    )


def resolve_sigma(option: Literal[-1, 0, 1, "adaptive"], problem: LeaseProblem) -> int:
    if option != "adaptive":
        return option
    others_wait = (~problem.guaranteed & (problem.leases > 0)).any()
    return -1 if others_wait else 1


def plannable(problem: LeaseProblem) -> tuple[IntArray, dict[int, str]]:
    """SLO jobs with an option they can meet alone, and guaranteed jobs that can meet none."""
    has_option = np.zeros(problem.num_jobs, dtype=bool)
    has_option[problem.row_job[problem.row_feasible]] = True
    alone = np.flatnonzero(problem.is_slo & problem.guaranteed & ~has_option)
    broken = {int(j): deadline_report.broken_alone(problem, int(j)) for j in alone}
    return np.flatnonzero(problem.is_slo & has_option), broken


def admit(
    problem: LeaseProblem,
    options: DeadlineOptions,
    ctx: SolveContext,
    arrival: FloatArray | None = None,
) -> Admission:
    """Choose options and reserve slots for SLO jobs: jointly (the MILP, else the greedy
    packing) or Chronus's way, one job at a time (offered at `arrival`)."""
    jobs, broken = plannable(problem)
    if options.admission == "one_by_one":
        return one_by_one(problem, jobs, broken, options.sigma, ctx, arrival)
    chronus = greedy_plan(problem, jobs)
    admission = Admission(
        LeasePlan.empty(problem),
        Status.OPTIMAL,
        resolve_sigma(options.sigma, problem),
        chronus[0].value(problem),
        broken=broken,
    )
    if jobs.size == 0:
        return admission
    packings = [chronus, greedy_plan(problem, jobs, by_density=True)]
    answer = solve_lease_milp(problem, jobs, ctx, packings)
    # The solver report speaks for the whole answer: its gap is to the full model's bound.
    admission.mip_gap, admission.detail = answer.gap, answer.detail or None
    admission.termination = answer.termination
    if answer.plan is not None:
        admission.plan, admission.status = answer.plan, answer.status
        return admission
    # Fewest broken guarantees first, then value: exactly when the budget allows, and the
    # greedy packings' best otherwise (also on ties, which keeps their order's choice).
    plan, lost = min(packings, key=lambda pl: (pl[1].size, -pl[0].value(problem)))
    how = "the greedy packing answered"
    exact = fewest_broken(problem, jobs, ctx)
    if exact is not None:
        exact_lost = jobs[problem.guaranteed[jobs] & ~exact.admitted[jobs]]
        if (exact_lost.size, -exact.value(problem)) < (lost.size, -plan.value(problem)):
            plan, lost = exact, exact_lost
            how = "the fewest guarantees are broken (exact), then the most value kept"
    admission.plan, admission.status = plan, Status.FALLBACK
    admission.warnings.append(f"lease MILP {answer.detail}; {how}")
    for j in lost:
        broken[int(j)] = deadline_report.broken_jointly(problem, int(j))
    return admission


def run(
    snapshot: Snapshot, arrays: ClusterArrays, options: DeadlineOptions, ctx: SolveContext
) -> Outcome:
    problem = lease_problem(
        snapshot,
        options.overhead_seconds,
        options.horizon_slots,
        arrays.throughput,
        margins(snapshot, options.safety_margin, options.uncertainty),
    )
    scored = weighted(problem, options.objective, options.lease_price)
    admission = admit(scored, options, ctx, arrivals(snapshot))
    admission.plan = keep_running(problem, shift(problem, admission.plan, admission.sigma))
    lease = run_now(
        problem,
        admission.plan,
        options.fill_guaranteed,
        options.split_best_effort,
        admission.lending,
    )
    outcome = deadline_report.outcome(
        problem, arrays, admission, lease, (options.objective, scored)
    )
    if ctx.options.explain:
        # The reasons cost feasibility MILPs: only asked-for explanations pay for them.
        from apportion.formulations.deadlines.evidence import decision_evidence

        evidence = decision_evidence(problem, admission, lease, options.horizon_slots, ctx)
        outcome = outcome.but(evidence=evidence)
    return outcome


POLICY = Policy(
    name="deadline_admission",
    summary="Admit SLO jobs by value with a lease MILP so guaranteed deadlines hold; place "
    "guaranteed jobs round-up consolidated, fill spare GPUs by shortest remaining GPU-time "
    "(Chronus).",
    options=DeadlineOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(time_limit=DEFAULT_TIME_LIMIT, mip_gap=DEFAULT_MIP_GAP),
)
