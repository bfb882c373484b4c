"""Heterogeneity-aware max-min fairness over configurations (FORMULATIONS §9g): Gavel's policy
(§1) with a job's time shared among its configurations rather than among GPU types.

With Ĝ_jc the goodput of job j in configuration c over its smallest (the slowest configuration
counts 1; discounted by the re-allocation factor where c restarts j) and X_jc ∈ [0, 1] the
fraction of time j runs in c:

    maximize    t
    subject to  Σ_c Ĝ_jc X_jc ≥ w_j t  ∀j,   Σ_c X_jc ≤ 1  ∀j,   Σ_{j, c on k} g_c X_jc ≤ N_k  ∀k

then, with t held at its optimum, maximize Σ_j Σ_c Ĝ_jc X_jc / w_j (the Pareto stage of §1d: no
job can gain without another losing). A job whose every share is 1 gets its slowest
configuration's goodput all the time. A pinned job keeps its configuration all the time and
leaves the model: its GPUs leave N_k, and it takes no share of the rest and no part in the
level. An LP over classes of identical jobs (their shares split evenly, exact by symmetry); the
round mechanism turns shares into configurations per round.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from pydantic import Field

from apportion.formulations.elastic.candidates import ElasticJobs, collect
from apportion.formulations.elastic.classes import merge
from apportion.formulations.elastic.model import ChoiceModel, build, pinned_use, shares
from apportion.formulations.elastic.options import ElasticOptions
from apportion.formulations.elastic.outcome import shared_outcome
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import IntArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.explain.codes import Reason
from apportion.solver.model import Block, Sense
from apportion.solver.policy import DecisionEvidence, Outcome, Policy
from apportion.solver.snapshot import Snapshot
from apportion.solver.sparse import sp
from apportion.solver.status import Status

NAME = "elastic_max_min"
#: The Pareto stage keeps every job within this (relative) of the max-min level.
LEVEL_TOLERANCE = 1e-7
#: A share row's dual (the level per unit of the row, rows of order 1) above this holds the level.
DUAL_FLOOR = 1e-9


class ElasticMaxMinOptions(ElasticOptions):
    pareto: bool = Field(
        True,
        description="After the max-min level, maximize the total normalized goodput with every "
        "job kept at or above it.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: ElasticMaxMinOptions, ctx: SolveContext
) -> Outcome:
    jobs = collect(snapshot, problem, options.restart_factor)
    c = jobs.candidates
    # pinned jobs keep their configuration all the time, outside the model and its level
    active = jobs.has_candidates() & ~jobs.pinned
    classes = merge(jobs, c.normalized, active, ctx.options.merge_identical)
    choice = build(
        NAME,
        jobs,
        classes,
        problem.gpu_count,
        problem.gpu_names,
        problem.job_ids,
        False,
        options.presolve,
    )
    held = np.flatnonzero(jobs.pinned[c.job])
    pinned = (c.job[held], held, np.ones(held.size))
    over = pinned_use(jobs, problem.num_types) > problem.gpu_count
    if over.any():
        nothing = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        names = ", ".join(problem.gpu_names[k] for k in np.flatnonzero(over))
        text = f"pinned jobs alone hold more GPUs than there are of {names}"
        return shared_outcome(problem, jobs, nothing, Status.INFEASIBLE, None).warned(text)
    if choice.y.size == 0:
        return shared_outcome(problem, jobs, pinned, Status.OPTIMAL, None)
    level, solution, first, share, skipped = _levels(ctx, choice, jobs, options.pareto)
    if not solution.status.has_solution:
        return shared_outcome(problem, jobs, pinned, solution.status, None).but(solution=solution)
    job, cand, x = shares(choice, solution)
    split = (
        np.concatenate([pinned[0], job]),
        np.concatenate([held, cand]),
        np.concatenate([pinned[2], x]),
    )
    outcome = shared_outcome(problem, jobs, split, solution.status, level)
    outcome = outcome.but(
        solution=solution, merged_groups=classes.size if ctx.options.merge_identical else None
    )
    if ctx.options.explain:
        evidence = _evidence(choice, first, share, outcome.reasons, held_by_pin=c.job[held])
        outcome = outcome.but(evidence=evidence)
    return outcome.warned(skipped) if skipped else outcome


def _evidence(
    choice: ChoiceModel,
    first: Solution,
    share: Block,
    reasons: Mapping[int, str],
    held_by_pin: IntArray,
) -> DecisionEvidence:
    """Bottlenecks from the max-min LP's share duals; prices from its capacity duals (the
    level gained per extra GPU)."""
    codes: dict[int, str] = {}
    texts: dict[int, str] = {}
    for j, why in reasons.items():
        codes[j], texts[j] = Reason.NO_THROUGHPUT, why
    for j in held_by_pin.tolist():
        codes[j], texts[j] = Reason.GRANTED, "pinned: keeps its current configuration"
    if first.row_dual is None:
        return DecisionEvidence(codes, texts, note="the solver reported no duals")
    held = np.abs(first.dual(share)) > DUAL_FLOOR
    for g, members in enumerate(choice.classes.members):
        for j in members.tolist():
            if held[g]:
                codes[j], texts[j] = Reason.BOTTLENECK, "holds the max-min level"
    prices = np.abs(first.dual(choice.capacity))
    return DecisionEvidence(
        codes,
        texts,
        granted="above the level, or at it without holding it",
        note="prices: the max-min level gained per extra GPU (capacity duals of the first LP)",
        prices=prices,
        price_stage="max-min",
    )


def _levels(
    ctx: SolveContext, choice: ChoiceModel, jobs: ElasticJobs, pareto: bool
) -> tuple[float | None, Solution, Solution, Block, str]:
    """The max-min LP, then (with `pareto`) the total with the level held; the last item says
    why the second LP's answer was not used ("" when it was, or was not asked for)."""
    classes = choice.classes
    c = jobs.candidates
    value = c.normalized[classes.column]
    weight = jobs.weight[classes.representative()]
    model = choice.model
    t = model.add_variables("t", 1, coords=(("level", ["t"]),))
    share = sp.csr_matrix(
        (value, (classes.owner, np.arange(value.size))), (classes.size, value.size)
    )
    rows = model.add_constraints(
        "share",
        {choice.y: share, t: sp.csr_matrix(-(classes.count * weight)[:, None])},
        lower=0.0,
        coords=(("job", [str(i) for i in range(classes.size)]),),
    )
    model.set_objective({t: np.ones(1)}, Sense.MAXIMIZE)
    request = SolveRequest(model, LpMethod.SIMPLEX, tuning=choice.tuning)
    first = ctx.solve(request)
    if not first.status.has_solution or not pareto:
        return first.objective, first, first, rows, ""
    level = float(first.value(t)[0])
    model.add_constraints("level", {t: np.ones((1, 1))}, lower=level * (1 - LEVEL_TOLERANCE))
    model.set_objective({choice.y: value / weight[classes.owner]}, Sense.MAXIMIZE)
    second = ctx.solve(request)
    if second.status is Status.OPTIMAL:
        return level, second, first, rows, ""
    skipped = (
        f"the Pareto stage ended {second.status.value} ({second.termination.value}: "
        f"{second.detail}): the answer is the max-min LP's, optimal for its level, but other "
        "jobs might use what some leave idle"
    )
    return level, first, first, rows, skipped


POLICY = Policy(
    name=NAME,
    summary="Max-min fairness of normalized goodput with each elastic job's time shared among "
    "its configurations (GPU type, GPUs, batch size), then the most total goodput.",
    options=ElasticMaxMinOptions,
    run=run,
    problem_class="LP sequence",
)
