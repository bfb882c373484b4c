"""ONES's objective (SC'21), exact (FORMULATIONS §9f): every GPU kept busy, then the least
remaining time × GPUs.

ONES minimizes Σ_{running j} T_j(c)·g_c, the remaining time T_j(c) = R_j / G_jc of each running
job (R_j its work left, G_jc its goodput in c) times its GPUs, with every GPU given to some job.
Without that rule the sum is least when nobody runs; the exact form is lexicographic, two MILPs
on the model of `model` with binary x_jc:

    U* = maximize Σ_jc g_c x_jc                                  (GPUs used)
    minimize Σ_jc (R_j / G_jc) g_c x_jc  subject to  Σ_jc g_c x_jc ≥ U*

(ONES searches this by evolution over per-GPU assignments; `simulator.elastic.ones` has that
search as a baseline.) Every elastic job needs `remaining`; jobs with none left wait.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from apportion.formulations.elastic.candidates import ElasticJobs, collect
from apportion.formulations.elastic.evidence import integral_evidence
from apportion.formulations.elastic.integral import (
    IntegralAnswer,
    answer,
    pinned_overflow,
    prepare,
    solve_integral,
)
from apportion.formulations.elastic.model import Presolve
from apportion.formulations.elastic.options import TuningOptions
from apportion.formulations.elastic.outcome import integral_outcome
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.errors import FieldError, InputError
from apportion.solver.model import Sense
from apportion.solver.policy import Outcome, Policy, PolicyDefaults
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

NAME = "ones"
DONE = "no work left (`remaining` is 0)"


class OnesOptions(TuningOptions):
    """ONES's objective has no parameter, and restarts cost it nothing."""


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: OnesOptions, ctx: SolveContext
) -> Outcome:
    jobs = collect(snapshot, problem, restart=False)
    _require_remaining(jobs.remaining, jobs.has_candidates())
    c = jobs.candidates
    left = jobs.remaining[c.job]
    for j in np.flatnonzero(jobs.has_candidates() & (jobs.remaining <= 0)).tolist():
        jobs.reasons[j] = DONE
    time = np.divide(left, c.goodput, out=np.zeros(c.size), where=c.goodput > 0)
    gpu_seconds: FloatArray = time * c.gpus
    keep = (left > 0) | jobs.pinned[c.job]
    result = _lexicographic(
        ctx, problem, jobs, c.gpus.astype(float), gpu_seconds, keep, options.presolve
    )
    runs = result.pick >= 0
    objective = float(gpu_seconds[result.pick[runs]].sum()) if result.status.has_solution else None
    name = "Σ remaining time × GPUs over running jobs, with the most GPUs in use"
    outcome = integral_outcome(problem, jobs, result.pick, result.status, objective, name)
    outcome = outcome.warned(*result.warnings).but(
        solution=result.solution,
        termination=result.termination,
        merged_groups=result.classes if ctx.options.merge_identical else None,
    )
    outcome = outcome.summarized(gpus_in_use=int(c.gpus[result.pick[runs]].sum()))
    if ctx.options.explain and result.status.has_solution:
        # two objectives in turn: codes only (a price would mix GPUs and GPU-seconds)
        evidence = integral_evidence(
            ctx, problem, jobs, result.pick, -gpu_seconds, keep, None, options.presolve
        )
        outcome = outcome.but(evidence=evidence)
    return outcome


def _lexicographic(
    ctx: SolveContext,
    problem: ClusterArrays,
    jobs: ElasticJobs,
    gpus: FloatArray,
    gpu_seconds: FloatArray,
    keep: BoolArray,
    presolve: Presolve,
) -> IntegralAnswer:
    """The most GPUs in use, then the least GPU-seconds of remaining work among those."""
    merged = ctx.options.merge_identical
    choice, kept, used = prepare(NAME, problem, jobs, gpus, keep, merged, presolve)
    over = pinned_overflow(problem, jobs)
    if over or choice.y.size == 0:
        return solve_integral(NAME, ctx, problem, jobs, gpus, keep, presolve)
    model = choice.model
    model.set_objective({choice.y: used}, Sense.MAXIMIZE)
    request = SolveRequest(model, tuning=choice.tuning)
    first = ctx.solve(request)
    if not first.status.has_solution or first.objective is None:
        return answer(ctx, choice, kept, first)
    most = float(np.rint(first.objective))
    model.add_constraints("busy", {choice.y: used[None, :]}, lower=most - 0.5)
    cost = gpu_seconds[kept][choice.classes.column]
    scale = float(cost.max(initial=0.0)) or 1.0  # coefficients of order 1
    model.set_objective({choice.y: cost / scale}, Sense.MINIMIZE)
    second = ctx.solve(request)
    if second.status.has_solution:
        result = answer(ctx, choice, kept, second)
        if first.status is not Status.OPTIMAL:
            # the second MILP is optimal only among allocations using the first's U
            return replace(result, status=Status.FEASIBLE, termination=first.termination)
        return result
    return answer(ctx, choice, kept, first)


def _require_remaining(remaining: FloatArray, elastic: BoolArray) -> None:
    missing = np.flatnonzero(elastic & np.isnan(remaining))
    if missing.size:
        raise InputError(
            [
                FieldError(
                    ("snapshot", "jobs", int(j), "elastic", "remaining"),
                    "required by the ones policy (remaining time = remaining / goodput)",
                    "missing",
                )
                for j in missing
            ]
        )


POLICY = Policy(
    name=NAME,
    summary="ONES: keep every GPU busy with elastic jobs' configurations, then minimize Σ "
    "remaining time × GPUs.",
    options=OnesOptions,
    run=run,
    problem_class="MILP",
    needs=frozenset({Feature.MILP}),
    defaults=PolicyDefaults(mip_gap=1e-4),
)
