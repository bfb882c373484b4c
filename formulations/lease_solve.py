"""How the lease MILP is solved within its time budget.

1. The LP relaxation gives a bound and a guide (it is solved in a fraction of a second).
2. Greedy packings (value order, value-per-GPU-lease order, and LP-guided) give a start that keeps
   every guarantee; if the best is already within the gap of the bound, it is the answer.
3. On large models, a sub-MILP restricted to the slots the LP or the start use improves the start
   quickly (on the Philly-like benchmark it finds in ~1–2 s what the full MILP needs ~40 s for:
   the full model spends its first seconds in root cuts).
4. The full MILP, started from the best plan, uses the rest of the budget and reports the gap;
   for a large model left with too little time the sub-MILP's plan stands, with the gap to the
   relaxation's bound.
Infeasibility of the relaxation or of the full MILP means a guarantee cannot be kept.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from formulations.deadline_problem import LeaseProblem
from formulations.lease_milp import LeaseModel, build
from formulations.lease_plan import LeasePlan, plan_violations
from solver.backends import Solution
from solver.policy import SolveContext
from solver.status import Status

IntArray = NDArray[np.int64]

#: Up to this many slot variables the full MILP runs directly (it solves such models in well
#: under a second); beyond, the restricted sub-MILP runs first.
DIRECT_MILP_COLUMNS = 500
#: Share of the remaining budget the sub-MILP uses when the full MILP gets the rest.
SUB_MILP_SHARE = 0.5
#: A large full MILP given less than this per slot variable only repeats its root (measured: its
#: first cut rounds take 3–4 s at 17,000 columns); the sub-MILP then gets the whole budget and
#: its plan stands, with the gap to the relaxation's bound.
FULL_SECONDS_PER_COLUMN = 2e-4


@dataclass
class MilpAnswer:
    plan: LeasePlan | None  # None: no answer, the caller falls back to the greedy packing
    status: Status
    gap: float | None
    detail: str


def relative_gap(bound: float, value: float) -> float:
    return max(bound - value, 0.0) / max(abs(value), 1.0)


@contextmanager
def time_limit(ctx: SolveContext, seconds: float) -> Iterator[None]:
    """Solve with `seconds` as the limit, then restore the request's options."""
    saved = ctx.options
    ctx.options = saved.model_copy(update={"time_limit": max(seconds, 0.01)})
    try:
        yield
    finally:
        ctx.options = saved


def solve_lease_milp(
    problem: LeaseProblem,
    jobs: IntArray,
    ctx: SolveContext,
    packings: list[tuple[LeasePlan, IntArray]],
) -> MilpAnswer:
    """Steps 1–4 of the module docstring; `packings` gain the LP-guided one."""
    budget = ctx.options.time_limit or float("inf")
    deadline = time.perf_counter() + budget
    gap_goal = ctx.options.mip_gap or 0.0
    model = build(problem, jobs)
    with time_limit(ctx, budget):
        relaxed = ctx.solve(model.model, relax=True)
    if relaxed.status is Status.INFEASIBLE:
        return MilpAnswer(None, Status.INFEASIBLE, None, "relaxation infeasible")
    if relaxed.status.has_solution:
        packings.append(model.guided_plan(problem, relaxed.x))
    kept = [plan for plan, lost in packings if lost.size == 0]
    best = max(kept, key=model.objective, default=None)
    bound = relaxed.objective if relaxed.status is Status.OPTIMAL else None

    def answer(plan: LeasePlan, status: Status, detail: str = "") -> MilpAnswer:
        gap = None if bound is None else relative_gap(bound, model.objective(plan))
        return MilpAnswer(plan, status, gap, detail)

    def close_enough(plan: LeasePlan | None) -> bool:
        return (
            plan is not None
            and bound is not None
            and (relative_gap(bound, model.objective(plan)) <= gap_goal)
        )

    if close_enough(best):
        return answer(best, Status.OPTIMAL, "greedy packing within the gap of the relaxation")
    full_seconds = FULL_SECONDS_PER_COLUMN * model.x.size
    if best is not None and bound is not None and model.x.size > DIRECT_MILP_COLUMNS:
        left = deadline - time.perf_counter()
        share = SUB_MILP_SHARE if left >= 2 * full_seconds else 1.0
        best = _improve(problem, jobs, ctx, model, relaxed, best, share * left)
        if close_enough(best):
            return answer(best, Status.OPTIMAL, "sub-MILP within the gap of the relaxation")
        if deadline - time.perf_counter() < full_seconds:
            return answer(best, Status.FEASIBLE, "sub-MILP answer; no time left for the full MILP")
    left = deadline - time.perf_counter()
    with time_limit(ctx, left):
        solution = ctx.solve(model.model, start=None if best is None else model.start(best))
    return _read(problem, model, solution)


def _improve(
    problem: LeaseProblem,
    jobs: IntArray,
    ctx: SolveContext,
    model: LeaseModel,
    relaxed: Solution,
    best: LeasePlan,
    seconds: float,
) -> LeasePlan:
    """The sub-MILP on the slot variables the relaxation or `best` use; the better plan."""
    start = model.start(best)
    allowed = (relaxed.value(model.x) > 1e-6) | (start[model.x.span] > 0.5)
    sub = build(problem, jobs, x_upper=allowed.astype(float))
    with time_limit(ctx, seconds):
        solution = ctx.solve(sub.model, start=start)
    if not solution.status.has_solution:
        return best
    plan = sub.plan(problem, solution.x)
    if plan_violations(problem, plan) or model.objective(plan) <= model.objective(best):
        return best
    return plan


def _read(problem: LeaseProblem, model: LeaseModel, solution: Solution) -> MilpAnswer:
    detail = f"{solution.status.value}: {solution.detail}"
    if not solution.status.has_solution:
        return MilpAnswer(None, solution.status, None, detail)
    plan = model.plan(problem, solution.x)
    flaws = plan_violations(problem, plan)
    if flaws:
        return MilpAnswer(None, Status.ERROR, None, f"answer rejected: {flaws[0]}")
    return MilpAnswer(plan, solution.status, solution.mip_gap, detail)
