"""The MILP over its core (FORMULATIONS §9c): the columns the LP relaxation's reduced costs
cannot rule out.

Let the LP relaxation have optimum z* (minimized, say; mirrored when maximized) at y* with reduced
costs d. Dual feasibility makes every term of  z(y) − z* = Σ_c d_c (y_c − y*_c) + Σ_rows π_r (s_r −
s*_r)  nonnegative for any point y of the model, so z(y) ≥ z* + |d_c|·|y_c − y*_c| for each
column c. A point within τ of the LP bound therefore keeps every column with |d_c| > τ at its
LP value (a bound of the column, an integer). Fixing those leaves the core MILP, over a small
share of the columns on Sia's rounds, which HiGHS closes much faster than the whole; it holds
every point within τ of z*, so with its answer z and bound b the whole model's bound is
min(b, z* + τ). With τ the gap's width that proves most rounds; otherwise a second core with
τ = z − z* holds every point better than z, and its own gap is the answer's. The point the core
starts from always stays free in it (unfixing only enlarges a core), so a core MILP stopped by
a limit still returns a feasible answer, measured against the bound it proved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.elastic.model import ChoiceModel
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Scalar, Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Block, Model, Sense
from apportion.solver.sparse import sp
from apportion.solver.status import Status, Termination, relative_gap

#: The first core's τ, in widths of the gap (gap × |z*|): on Sia's 600-job rounds the optimum
#: lies within 2 widths of the LP bound, which this proves with one core (bench/elastic.py).
FIRST_CORE = 1.0
#: Reduced costs hold to the LP's tolerances: a column is fixed only this far (× max(1, |z*|))
#: beyond τ.
DUAL_SLACK = 1e-6
#: A column within this of a bound is at it.
AT_BOUND = 1e-9
#: HiGHS's own primal heuristics, off when the MILP starts from a known point (search module);
#: its root reduced-cost heuristic runs whatever the effort says, and costs the most.
NO_HEURISTICS: dict[str, Scalar] = {
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_root_reduced_cost": False,
}


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

    def of(self, values: FloatArray, y: FloatArray) -> float:
        return self.offset + self.sign * float(values @ y)

    def gap(self, bound: float, found: float) -> float:
        return relative_gap(bound, found, maximize=not self.minimize)

    def beyond(self, bound: float, distance: float) -> float:
        """The objective `distance` worse than `bound`."""
        return bound - self.sign * distance

    def weaker(self, a: float, b: float) -> float:
        """The looser of two bounds."""
        return min(a, b) if self.minimize else max(a, b)

    def tighter(self, a: float, b: float) -> float:
        return max(a, b) if self.minimize else min(a, b)

    def better(self, a: float, b: float) -> bool:
        """Whether objective `a` is better than `b`."""
        return a < b if self.minimize else a > b


#: Σ values·y itself, maximized (no offset).
PLAIN = Reading()


@dataclass(frozen=True)
class Point:
    """A feasible y of the whole model and its objective."""

    y: FloatArray
    value: float


def solve_core(
    ctx: SolveContext,
    choice: ChoiceModel,
    values: FloatArray,
    relaxed: Solution,
    start: Point,
    reading: Reading,
) -> Solution | None:
    """The best Σ values·y from the LP `relaxed` (optimal, with reduced costs) and a feasible
    `start`, by at most two core MILPs (see the module); None when the LP has no reduced costs."""
    if relaxed.col_dual is None or relaxed.objective is None:
        return None
    lp = np.clip(relaxed.value(choice.y), 0.0, None)
    reduced = np.abs(relaxed.reduced_cost(choice.y))
    bound = float(relaxed.objective)
    gap = ctx.settings().mip_rel_gap or 0.0
    margin = DUAL_SLACK * max(1.0, abs(bound))
    point = start
    tau = min(abs(start.value - bound), FIRST_CORE * gap * abs(bound))
    for last in (False, True):
        fixed = _fixed(choice, lp, reduced, tau + margin, point.y)
        solved, found = _solve(ctx, choice, values, reading, fixed, point)
        point = found
        # points in the core are bounded by its MILP, the others by z* ± τ; all by z*
        core = reading.weaker(_bound_of(solved, reading), reading.beyond(bound, tau))
        proven = reading.tighter(core, bound)
        closes = reading.gap(proven, point.value) <= gap
        if closes or last or solved.status is not Status.OPTIMAL:
            return as_solution(relaxed, choice, point, reading.gap(proven, point.value),
                               _verdict(solved, closes, int((fixed < 0).sum())))  # fmt: skip
        tau = abs(point.value - bound)
    raise AssertionError("unreachable: the second core always answers")


def _fixed(
    choice: ChoiceModel, lp: FloatArray, reduced: FloatArray, tau: float, keep: FloatArray
) -> FloatArray:
    """Per column, the value it is fixed at, −1 where it stays free: at its LP bound where its
    reduced cost exceeds `tau`, unless the point `keep` has it elsewhere."""
    upper = choice.classes.count[choice.classes.owner]
    at_zero = lp <= AT_BOUND
    at_upper = np.abs(lp - upper) <= AT_BOUND
    value = np.where(at_upper, upper, 0.0)
    fix = (at_zero | at_upper) & (reduced > tau) & (keep == value)
    out: FloatArray = np.where(fix, value, -1.0)
    return out


def _solve(
    ctx: SolveContext,
    choice: ChoiceModel,
    values: FloatArray,
    reading: Reading,
    fixed: FloatArray,
    start: Point,
) -> tuple[Solution, Point]:
    """The core MILP started from `start`, and the best point known after it."""
    classes = choice.classes
    gpus = choice.gpus()
    gpu = choice.jobs.candidates.gpu[classes.column]
    held = np.maximum(fixed, 0.0)
    cols = np.flatnonzero(fixed < 0)
    capacity = choice.free - np.bincount(gpu, weights=gpus * held, minlength=choice.free.size)
    left = classes.count - np.bincount(classes.owner, weights=held, minlength=classes.size)
    core, v = restricted("core", choice, cols, classes.count[classes.owner[cols]], left, capacity)
    sense = Sense.MINIMIZE if reading.minimize else Sense.MAXIMIZE
    core.set_objective({v: reading.sign * values[cols]}, sense, reading.of(values, held))
    tuning = {k: {**t, **NO_HEURISTICS} for k, t in choice.tuning.items()}
    begin = (np.arange(cols.size, dtype=np.int64), start.y[cols])
    solved = ctx.solve(SolveRequest(core, start=begin, tuning=tuning, auxiliary=True))
    if not solved.status.has_solution or solved.objective is None:
        return solved, start
    y = held.copy()
    y[cols] = np.rint(solved.value(v))
    found = reading.of(values, y)
    return solved, (Point(y, found) if reading.better(found, start.value) else start)


def restricted(
    name: str,
    choice: ChoiceModel,
    cols: IntArray,
    upper: FloatArray,
    left: FloatArray,
    capacity: FloatArray,
) -> tuple[Model, Block]:
    """The multiple-choice rows over the columns `cols` of `choice` alone (integer, each at most
    `upper`): at most `left[g]` members of class g run, at most `capacity[k]` GPUs of type k."""
    classes = choice.classes
    gpus = choice.gpus()[cols]
    gpu = choice.jobs.candidates.gpu[classes.column[cols]]
    owners, row = np.unique(classes.owner[cols], return_inverse=True)
    at = np.arange(cols.size)
    model = Model(name)
    v = model.add_variables("v", cols.size, upper=upper, integer=True)
    pick = sp.csr_matrix((np.ones(cols.size), (row, at)), (owners.size, cols.size))
    model.add_constraints("choose", {v: pick}, upper=left[owners])
    per_type = sp.csr_matrix((gpus, (gpu, at)), (choice.free.size, cols.size))
    model.add_constraints("capacity", {v: per_type}, upper=np.maximum(capacity, 0.0))
    return model, v


def _bound_of(solved: Solution, reading: Reading) -> float:
    """The bound the core MILP proved on its own points (none: the weakest there is)."""
    nothing = -np.inf if reading.minimize else np.inf
    if solved.status is Status.INFEASIBLE:
        return -nothing  # no point in the core: the points outside bound it alone
    if not solved.status.has_solution or solved.objective is None or solved.mip_gap is None:
        return nothing
    if not np.isfinite(solved.mip_gap):
        return nothing
    return solved.objective + reading.sign * solved.mip_gap * abs(solved.objective)


def _verdict(solved: Solution, closes: bool, free: int) -> tuple[Status, Termination, str]:
    core = f"the MILP over the {free} columns the LP's reduced costs leave free"
    if closes:
        return Status.OPTIMAL, Termination.OPTIMAL, f"proven by {core}"
    if solved.status.has_solution:
        return Status.FEASIBLE, solved.termination, f"{core}: {solved.detail}"
    detail = f"the LP relaxation rounded; the MILP stopped before improving it ({core})"
    return Status.FEASIBLE, solved.termination, f"{detail}: {solved.detail}"


def as_solution(
    relaxed: Solution,
    choice: ChoiceModel,
    point: Point,
    gap: float,
    verdict: tuple[Status, Termination, str],
) -> Solution:
    """`point` as the whole model's solution, its `gap` measured on the policy's objective."""
    status, termination, detail = verdict
    x = relaxed.x.copy()
    x[choice.y.span] = point.y
    return Solution(
        status,
        point.value,
        x,
        backend=relaxed.backend,
        solver=relaxed.solver,
        detail=detail,
        mip_gap=gap,
        termination=termination,
    )
