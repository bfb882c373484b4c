"""Solving the multiple-choice MILP fast (FORMULATIONS §9c): from its LP relaxation.

The LP relaxation of a multiple-choice knapsack has a basic optimum in which at most as many
classes as there are capacity rows (GPU types) are fractional. Rounding every column down keeps
the capacities; the members left over (a few) are then placed by a small MILP over the GPUs still
free. That answer is usually within the gap of the LP bound, which then proves it (no branch and
bound at all); otherwise it starts the full MILP, whose own primal heuristics then spend most of
the time without improving on it, so the family turns them off (bench/elastic.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from apportion.formulations.elastic.model import ChoiceModel
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import LpMethod, Scalar, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Model, Sense
from apportion.solver.sparse import sp
from apportion.solver.status import Status, Termination, relative_gap

#: A column of the LP this close to a whole number is whole.
INTEGRAL = 1e-9
#: HiGHS's own primal heuristics, off when a start comes from the LP (see the module).
NO_HEURISTICS: dict[str, Scalar] = {"mip_heuristic_effort": 0.0}
#: Below this many columns the MILP alone is faster than three solves (its own heuristics find
#: the optimum at the root): a 64-GPU round of Sia's workloads has a few hundred.
GUIDED_COLUMNS = 2_000


@dataclass(frozen=True)
class Reading:
    """How the policy's objective reads Σ values·y: `offset` + Σ values·y maximized, or (with
    `minimize`) `offset` − Σ values·y minimized. Every gap, the solver's stopping rule
    included, is measured on that objective, the one the user reads."""

    offset: float = 0.0
    minimize: bool = False

    @property
    def sign(self) -> float:
        return -1.0 if self.minimize else 1.0

    def gap(self, bound: float, found: float) -> float:
        return relative_gap(bound, found, maximize=not self.minimize)


#: Σ values·y itself, maximized (no offset).
PLAIN = Reading()


def solve_guided(
    ctx: SolveContext,
    choice: ChoiceModel,
    values: FloatArray,
    auxiliary: bool = False,
    reading: Reading = PLAIN,
) -> Solution:
    """The best Σ values·y over `choice`, as `reading` states the objective: small models
    directly; larger ones proven by the LP bound when the rounded LP answer is within the gap,
    else by the MILP started from it (the rounded answer itself, feasible, when a limit stops
    that MILP before it takes its start). `auxiliary`: the model is not the policy's own (an
    explanation's what-if)."""
    model = choice.model
    sense = Sense.MINIMIZE if reading.minimize else Sense.MAXIMIZE
    model.set_objective({choice.y: reading.sign * values}, sense, reading.offset)
    milp = SolveRequest(model, tuning=choice.tuning, auxiliary=auxiliary)
    if choice.y.size < GUIDED_COLUMNS:
        return ctx.solve(milp)
    relaxed = ctx.solve(replace(milp, lp_method=LpMethod.SIMPLEX, relax=True, auxiliary=True))
    if not relaxed.status.has_solution or relaxed.objective is None:
        return ctx.solve(milp)
    lp = np.clip(relaxed.value(choice.y), 0.0, None)
    start = _rounded(ctx, choice, values, lp)
    gap = ctx.settings().mip_rel_gap or 0.0
    found = reading.offset + reading.sign * float(values @ start)
    bound = float(relaxed.objective)  # the offset included
    if relaxed.status is Status.OPTIMAL and reading.gap(bound, found) <= gap:
        return _rounded_answer(relaxed, choice, start, found, reading.gap(bound, found))
    tuning = {k: {**v, **NO_HEURISTICS} for k, v in choice.tuning.items()}
    columns = np.arange(choice.y.start, choice.y.start + choice.y.size, dtype=np.int64)
    solved = ctx.solve(replace(milp, start=(columns, start), tuning=tuning))
    if solved.status is Status.FEASIBLE and solved.objective is not None:
        # the LP bound holds for the MILP too: tighter than its own when a limit stopped it early
        known = reading.gap(bound, float(solved.objective))
        if solved.mip_gap is None or known < solved.mip_gap:
            solved = replace(solved, mip_gap=known)
    if solved.status.has_solution:
        return solved
    # stopped (by a limit) before it even took its start: the rounded answer stands, unproven
    return _rounded_answer(relaxed, choice, start, found, reading.gap(bound, found), solved)


def _rounded(
    ctx: SolveContext, choice: ChoiceModel, values: FloatArray, lp: FloatArray
) -> FloatArray:
    """The LP answer rounded down, then the left-over members placed by a small MILP."""
    classes = choice.classes
    gpus = choice.gpus()
    gpu = choice.jobs.candidates.gpu[classes.column]
    base = np.floor(lp + INTEGRAL)
    types = choice.free.size
    free = choice.free - np.bincount(gpu, weights=gpus * base, minlength=types)
    left = classes.count - np.bincount(classes.owner, weights=base, minlength=classes.size)
    cols = np.flatnonzero((left[classes.owner] > 0) & (gpus <= free[gpu] + INTEGRAL))
    if cols.size == 0:
        return base
    owners, row = np.unique(classes.owner[cols], return_inverse=True)
    residual = Model("residual")
    v = residual.add_variables("v", cols.size, upper=left[classes.owner[cols]], integer=True)
    ones = np.ones(cols.size)
    residual.add_constraints(
        "choose",
        {v: sp.csr_matrix((ones, (row, np.arange(cols.size))), (owners.size, cols.size))},
        upper=left[owners],
    )
    residual.add_constraints(
        "capacity",
        {v: sp.csr_matrix((gpus[cols], (gpu[cols], np.arange(cols.size))), (types, cols.size))},
        upper=np.maximum(free, 0.0),
    )
    residual.set_objective({v: values[cols]}, Sense.MAXIMIZE)
    solved = ctx.solve(SolveRequest(residual, tuning=choice.tuning, auxiliary=True))
    if solved.status.has_solution:
        base[cols] += np.rint(solved.value(v))
    return base


def _rounded_answer(
    relaxed: Solution,
    choice: ChoiceModel,
    start: FloatArray,
    found: float,
    gap: float,
    stopped: Solution | None = None,
) -> Solution:
    """The rounded answer as the model's solution, its `gap` measured against the LP bound:
    proven optimal within the gap, or (`stopped`: the MILP that ended without a point) a
    feasible answer with that MILP's termination."""
    x = relaxed.x.copy()
    x[choice.y.span] = start
    if stopped is None:
        status, termination, detail = (
            Status.OPTIMAL,
            Termination.OPTIMAL,
            "proven by the LP relaxation's bound",
        )
    else:
        status, termination = Status.FEASIBLE, stopped.termination
        detail = (
            f"the LP relaxation rounded; the MILP stopped before improving it: {stopped.detail}"
        )
    return Solution(
        status,
        found,
        x,
        backend=relaxed.backend,
        solver=relaxed.solver,
        detail=detail,
        mip_gap=gap,
        termination=termination,
    )
