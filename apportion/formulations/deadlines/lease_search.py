"""How the lease MILP is solved within its time budget.

0. A greedy packing that admits every job at its most valuable option is optimal as it is.
1. The LP relaxation gives a bound and a guide (it is solved in a fraction of a second).
2. Greedy packings (value order, value-per-GPU-lease order, and LP-guided) give a start that keeps
   every guarantee; if the best is already within the gap of the bound, it is the answer.
3. On large models, a sub-MILP restricted to the slots the LP or the start use improves the start
   quickly: the full model spends its first seconds in root cuts (the `deadlines` bench rows).
4. The full MILP, started from the best plan, uses the rest of the budget and reports the gap;
   for a large model left with too little time the sub-MILP's plan stands, with the gap to the
   relaxation's bound.
Infeasibility of the relaxation or of the full MILP means a guarantee cannot be kept.

An answer is `optimal` only when its gap is closed. One that stopped within a larger gap the
request allowed (the policy's default is 1 %) is `feasible` with termination `optimal`: the
search converged to what was asked, and the gap says how far the optimum may be.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from apportion.formulations.deadlines.lease_milp import MILP_TUNING, build
from apportion.formulations.deadlines.lease_plan import (
    LeasePlan,
    best_value_per_job,
    plan_violations,
)
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import IntArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.status import Status, Termination, relative_gap

#: Up to this many slot variables the full MILP runs directly (it solves such models in well
#: under a second); beyond, the restricted sub-MILP runs first.
DIRECT_MILP_COLUMNS = 500
#: Share of the remaining budget the sub-MILP uses when the full MILP gets the rest.
SUB_MILP_SHARE = 0.5
#: A large full MILP given less than this per slot variable only repeats its root (its first
#: cut rounds take seconds at Philly scale); the sub-MILP then gets the whole budget and
#: its plan stands, with the gap to the relaxation's bound.
FULL_SECONDS_PER_COLUMN = 2e-4
#: A relative gap this small is closed: the solvers' own optimality tolerance.
CLOSED_GAP = 1e-6


@dataclass
class MilpAnswer:
    plan: LeasePlan | None  # None: no answer, the caller falls back to the greedy packing
    status: Status
    gap: float | None
    detail: str
    termination: Termination | None = None  # None: the one the status implies


def solve_lease_milp(
    problem: LeaseProblem,
    jobs: IntArray,
    ctx: SolveContext,
    packings: list[tuple[LeasePlan, IntArray]],
) -> MilpAnswer:
    """Steps 0–4 of the module docstring; `packings` gain the LP-guided one."""
    ceiling = float(best_value_per_job(problem)[jobs].sum())
    for plan, lost in packings:
        if lost.size == 0 and plan.value(problem) >= ceiling:
            # Every job admitted at its most valuable option: nothing can be better.
            return MilpAnswer(plan, Status.OPTIMAL, 0.0, "greedy packing admits every job")
    return settled(_Search(problem, jobs, ctx).run(packings))


def settled(answer: MilpAnswer) -> MilpAnswer:
    """The answer with a status that says the truth about its gap (module docstring)."""
    if answer.status is Status.OPTIMAL and (answer.gap is None or answer.gap > CLOSED_GAP):
        termination = answer.termination or Termination.OPTIMAL
        return replace(answer, status=Status.FEASIBLE, termination=termination)
    return answer


class _Search:
    """One admission search within the request's time budget."""

    def __init__(self, problem: LeaseProblem, jobs: IntArray, ctx: SolveContext) -> None:
        self.problem, self.jobs, self.ctx = problem, jobs, ctx
        self.gap_goal = ctx.options.mip_gap or 0.0
        self.model = build(problem, jobs)
        self.bound: float | None = None

    def left(self) -> float:
        left = self.ctx.budget.left()
        return float("inf") if left is None else left

    def answer(
        self,
        plan: LeasePlan,
        status: Status,
        detail: str,
        termination: Termination | None = None,
    ) -> MilpAnswer:
        value = self.model.objective(plan)
        gap = None if self.bound is None else relative_gap(self.bound, value)
        if status is Status.FEASIBLE and gap is not None and gap <= self.gap_goal:
            status, termination = Status.OPTIMAL, Termination.OPTIMAL
        return MilpAnswer(plan, status, gap, detail, termination)

    def close_enough(self, plan: LeasePlan) -> bool:
        value = self.model.objective(plan)
        return self.bound is not None and relative_gap(self.bound, value) <= self.gap_goal

    def run(self, packings: list[tuple[LeasePlan, IntArray]]) -> MilpAnswer:
        relaxed = self.ctx.solve(SolveRequest(self.model.model, relax=True))
        if relaxed.status is Status.INFEASIBLE:
            return MilpAnswer(None, Status.INFEASIBLE, None, "relaxation infeasible")
        if relaxed.status.has_solution:
            packings.append(self.model.guided_plan(self.problem, relaxed.x))
        if relaxed.status is Status.OPTIMAL:
            self.bound = relaxed.objective
        kept = [plan for plan, lost in packings if lost.size == 0]
        best = max(kept, key=self.model.objective, default=None)
        if best is None:
            return self.full(None)
        if self.close_enough(best):
            return self.answer(best, Status.OPTIMAL, "greedy packing within the gap of the bound")
        full_seconds = FULL_SECONDS_PER_COLUMN * self.model.x.size
        if self.model.x.size > DIRECT_MILP_COLUMNS:
            share = SUB_MILP_SHARE if self.left() >= 2 * full_seconds else 1.0
            best = self.improve(relaxed, best, share * self.left())
            if self.close_enough(best):
                return self.answer(best, Status.OPTIMAL, "sub-MILP within the gap of the bound")
            if self.left() < full_seconds:
                why = "sub-MILP answer; no time for more"
                return self.answer(best, Status.FEASIBLE, why, self.ctx.budget.termination)
        return self.full(best)

    def improve(self, relaxed: Solution, best: LeasePlan, seconds: float) -> LeasePlan:
        """The sub-MILP on the slot variables the relaxation or `best` use; the better plan."""
        start = self.model.start(best)
        allowed = (relaxed.value(self.model.x) > 1e-6) | (start[self.model.x.span] > 0.5)
        sub = build(self.problem, self.jobs, x_upper=allowed.astype(float))
        solution = self.ctx.solve(
            SolveRequest(
                sub.model,
                start=(np.arange(start.size), start),
                time_limit=seconds,
                tuning=MILP_TUNING,
            )
        )
        if not solution.status.has_solution:
            return best
        plan = sub.plan(self.problem, solution.x)
        if plan_violations(self.problem, plan):
            return best
        return max(best, plan, key=self.model.objective)

    def full(self, best: LeasePlan | None) -> MilpAnswer:
        """The full MILP from `best` with what is left of the budget; its gap is its own."""
        start = None if best is None else self.model.start(best)
        solution = self.ctx.solve(
            SolveRequest(
                self.model.model,
                start=None if start is None else (np.arange(start.size), start),
                tuning=MILP_TUNING,
            )
        )
        detail = f"{solution.status.value}: {solution.detail}"
        plan = self.model.plan(self.problem, solution.x) if solution.status.has_solution else None
        flaws = [] if plan is None else plan_violations(self.problem, plan)
        if flaws:
            plan, detail = None, f"answer rejected: {flaws[0]}"
        better = plan is not None and (
            best is None or self.model.objective(plan) >= self.model.objective(best)
        )
        if plan is not None and better:
            gap = solution.mip_gap
            if gap is None and solution.status is Status.OPTIMAL and self.gap_goal <= CLOSED_GAP:
                gap = 0.0  # a backend that reports no gap, asked for none: proven
            elif gap is None and self.bound is not None:
                gap = relative_gap(self.bound, self.model.objective(plan))
            return MilpAnswer(plan, solution.status, gap, detail, solution.termination)
        if best is None:
            return MilpAnswer(None, solution.status, None, detail, solution.termination)
        kept = f"start kept ({detail})"
        return self.answer(best, Status.FEASIBLE, kept, solution.termination)
