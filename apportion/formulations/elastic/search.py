"""Solving the multiple-choice MILP fast (FORMULATIONS §9c): from its LP relaxation.

The LP relaxation of a multiple-choice knapsack has a basic optimum in which at most as many
classes as there are capacity rows (GPU types) are fractional. Rounding every column down keeps
the capacities; the members left over (a few) are then placed by a small MILP over the GPUs still
free. That answer is often within the gap of the LP bound, which then proves it (no branch and
bound at all); otherwise it starts the MILP over the columns the LP's reduced costs leave free
(`core`), with HiGHS's primal heuristics off (they spend most of the time without improving on
the start). Without reduced costs, the whole MILP starts from it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from apportion.formulations.elastic.core import (
    NO_HEURISTICS,
    PLAIN,
    Point,
    Reading,
    as_solution,
    restricted,
    solve_core,
)
from apportion.formulations.elastic.model import ChoiceModel
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Sense
from apportion.solver.status import Status, Termination

#: A column of the LP this close to a whole number is whole.
INTEGRAL = 1e-9
#: Below this many columns the MILP alone is faster than three solves (its own heuristics find
#: the optimum at the root): a 64-GPU round of Sia's workloads has a few hundred.
GUIDED_COLUMNS = 2_000


def solve_guided(
    ctx: SolveContext,
    choice: ChoiceModel,
    values: FloatArray,
    auxiliary: bool = False,
    reading: Reading = PLAIN,
) -> Solution:
    """The best Σ values·y over `choice`, as `reading` states the objective: small models
    directly; larger ones proven by the LP bound when the rounded LP answer is within the gap,
    else by the core MILP (or the whole one) started from it (the rounded answer itself,
    feasible, when a limit stops that MILP before it takes its start). `auxiliary`: the model is
    not the policy's own (an explanation's what-if)."""
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
    found = reading.of(values, start)
    bound = float(relaxed.objective)  # the offset included
    if relaxed.status is Status.OPTIMAL and reading.gap(bound, found) <= gap:
        proven = (Status.OPTIMAL, Termination.OPTIMAL, "proven by the LP relaxation's bound")
        return as_solution(relaxed, choice, Point(start, found), reading.gap(bound, found), proven)
    if relaxed.status is Status.OPTIMAL:
        cored = solve_core(ctx, choice, values, relaxed, Point(start, found), reading)
        if cored is not None:
            return cored
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
    detail = f"the LP relaxation rounded; the MILP stopped before improving it: {solved.detail}"
    stopped = (Status.FEASIBLE, solved.termination, detail)
    return as_solution(relaxed, choice, Point(start, found), reading.gap(bound, found), stopped)


def _rounded(
    ctx: SolveContext, choice: ChoiceModel, values: FloatArray, lp: FloatArray
) -> FloatArray:
    """The LP answer rounded down, then the left-over members placed by a small MILP."""
    classes = choice.classes
    gpus = choice.gpus()
    gpu = choice.jobs.candidates.gpu[classes.column]
    base = np.floor(lp + INTEGRAL)
    free = choice.free - np.bincount(gpu, weights=gpus * base, minlength=choice.free.size)
    left = classes.count - np.bincount(classes.owner, weights=base, minlength=classes.size)
    cols = np.flatnonzero((left[classes.owner] > 0) & (gpus <= free[gpu] + INTEGRAL))
    if cols.size == 0:
        return base
    residual, v = restricted("residual", choice, cols, left[classes.owner[cols]], left, free)
    residual.set_objective({v: values[cols]}, Sense.MAXIMIZE)
    solved = ctx.solve(SolveRequest(residual, tuning=choice.tuning, auxiliary=True))
    if solved.status.has_solution:
        base[cols] += np.rint(solved.value(v))
    return base
