"""PuLP as a backend: the compiled model as PuLP objects, solved by CBC or HiGHS.

PuLP is object-per-variable and object-per-row by nature, so building is the cost (the `backends`
bench rows); it is kept as low as PuLP allows: variables in one list
comprehension, each row one `LpAffineExpression` made from zipped CSR slices, no arithmetic on
PuLP objects. Sub-solvers: CBC (the binary PuLP ships; the default) and HiGHS (through highspy),
plus any other solver PuLP finds installed (GUROBI, GLPK_CMD, ...) by its PuLP name.

PuLP's own status needs care: it reports a limit that stopped CBC or HiGHS as "Optimal" (with
solution status "integer feasible"), so both its status and its solution status are read, and
the returned point is checked against the model before anything is called optimal.

Time limits. PuLP hands the solver the whole `timeLimit` only after building its objects and,
for CBC, writing the model to an MPS file (seconds for a large model) that CBC then
reads on its own clock; given the request's limit as is, CBC ran that long *after* those
steps. Here the limit is a deadline set when the backend starts, and each solver gets what is
left of it when it starts (`_Until`). What remains beyond the limit is CBC's to decide: it
looks at its clock between branch-and-bound nodes and cut passes, not while it reads the file,
solves the root LP or preprocesses (a large MILP with a 1 s limit ends seconds later), and a
node or a heuristic can run past the deadline. A limit already spent when the solver starts
still gives it
`MIN_SOLVER_SECONDS`, so the answer keeps whatever the root found.
"""

from __future__ import annotations

import math
import re
import time
from functools import cache
from typing import Any, ClassVar

import numpy as np
import pulp
from numpy.typing import NDArray

from apportion.solver.backends.base import (
    Backend,
    Feature,
    LpMethod,
    Solution,
    SolveSettings,
    reduced_costs,
)
from apportion.solver.backends.verify import empty_model_status, settle
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import IMPLIED, Status, Termination

C = pulp.constants
_T = Termination
# (PuLP status, PuLP solution status) -> why the solver stopped, before the point is checked
# (`verify.settle`). PuLP names no limit: it reports a stop by one as "Optimal" / "integer
# feasible" (with an incumbent) or "Not Solved" (without one).
TERMINATION: dict[tuple[int, int], Termination] = {
    (C.LpStatusOptimal, C.LpSolutionOptimal): _T.OPTIMAL,
    (C.LpStatusOptimal, C.LpSolutionIntegerFeasible): _T.USER_LIMIT,
    (C.LpStatusNotSolved, C.LpSolutionNoSolutionFound): _T.USER_LIMIT,
    (C.LpStatusInfeasible, C.LpSolutionInfeasible): _T.INFEASIBLE,
    (C.LpStatusInfeasible, C.LpSolutionNoSolutionFound): _T.INFEASIBLE,
    (C.LpStatusUnbounded, C.LpSolutionUnbounded): _T.UNBOUNDED,
    (C.LpStatusUnbounded, C.LpSolutionNoSolutionFound): _T.UNBOUNDED,
    (C.LpStatusUndefined, C.LpSolutionNoSolutionFound): _T.UNKNOWN,
}


def termination_of(raw: tuple[int, int], limited: bool, failed: bool) -> Termination:
    """Why PuLP's solver stopped: the table's row (a pair it lacks is `unknown`, so an unproven
    "Optimal" is never trusted); "not solved" without any limit, or a solver that raised, is a
    failure, not a limit."""
    if failed:
        return Termination.SOLVER_ERROR
    found = TERMINATION.get(raw, Termination.UNKNOWN)
    if found is Termination.USER_LIMIT and raw[0] == C.LpStatusNotSolved and not limited:
        return Termination.SOLVER_ERROR
    return found


CBC = "CBC"
HIGHS = "HiGHS"
#: What a solver is given when the deadline has passed before it starts: CBC given 0 stops
#: before its root heuristics and returns no point; 0.01 s lets them find one on small models.
MIN_SOLVER_SECONDS = 0.01
# A CBC on the PATH, else the binary PuLP ships (deprecated for PuLP 4.0, where it goes).
_CBC_CLASSES = ("COIN_CMD", "PULP_CBC_CMD")


@cache
def _found() -> tuple[str, ...]:
    return tuple(pulp.listSolvers(onlyAvailable=True))


@cache
def installed_solvers() -> tuple[str, ...]:
    """CBC first (the default), then HiGHS, then any other solver PuLP can run here."""
    found = _found()
    out = [CBC] if any(c in found for c in _CBC_CLASSES) else []
    out += [HIGHS] if HIGHS in found else []
    out += [s for s in found if s not in (*_CBC_CLASSES, HIGHS)]
    return tuple(out)


class PulpBackend(Backend):
    name: ClassVar[str] = "pulp"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.LP, Feature.MILP, Feature.DUALS})

    def available_solvers(self) -> list[str]:
        return list(installed_solvers())

    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        solver = self.resolve_solver(settings.solver) or self.available_solvers()[0]
        if model.num_cols == 0 or _empty_row_infeasible(model):
            status = empty_model_status(model) if model.num_cols == 0 else Status.INFEASIBLE
            value = model.offset if status.has_solution else None
            return Solution(
                status,
                value,
                np.zeros(model.num_cols),
                self.name,
                solver,
                termination=IMPLIED[status],
            )
        started = time.perf_counter()
        problem, columns, rows = to_pulp(model)
        built = time.perf_counter()
        # The limit counts from here, not from when the solver is launched: see `_Until`.
        limit = settings.time_limit
        deadline = None if limit is None else started + max(float(limit), 0.0)
        try:
            problem.solve(make_solver(solver, model, settings, deadline))
            raw, error = (problem.status, problem.sol_status), ""
        except pulp.PulpSolverError as exc:
            raw, error = (C.LpStatusUndefined, C.LpSolutionNoSolutionFound), str(exc)
        finished = time.perf_counter()
        x = _values(model, columns)
        termination = termination_of(raw, settings.time_limit is not None, bool(error))
        status, note = settle(termination, model, x)
        objective = float(model.cost @ x + model.offset)
        if status.has_solution and not math.isfinite(objective):
            status, note = Status.ERROR, "the objective is not finite: no answer"
        text = f"{pulp.LpStatus.get(raw[0], raw[0])} / {pulp.LpSolution.get(raw[1], raw[1])}"
        duals = _row_duals(model, rows, solver) if status.has_solution else None
        return Solution(
            status=status,
            objective=objective if status.has_solution else None,
            x=x,
            backend=self.name,
            solver=solver,
            detail="; ".join(filter(None, [text, error, note])),
            row_dual=duals,
            col_dual=reduced_costs(model, duals),
            build_seconds=built - started,
            solve_seconds=finished - built,
            termination=termination,
        )


Rows = list[tuple[int, pulp.LpConstraint]]


def to_pulp(model: CompiledModel) -> tuple[pulp.LpProblem, list[pulp.LpVariable], Rows]:
    """The model as a PuLP problem; returns it, its variables and (model row, constraint) pairs.

    Names are positional (`x12`, `r7`): PuLP sorts variables by name and rewrites characters it
    dislikes, so readable names live in the model export instead.
    """
    sense = pulp.LpMaximize if model.sense is Sense.MAXIMIZE else pulp.LpMinimize
    problem = pulp.LpProblem(re.sub(r"\W", "_", model.name) or "model", sense)
    make = getattr(problem, "add_variable", None) or pulp.LpVariable  # PuLP ≥ 3.3 prefers it
    lower = [None if math.isinf(v) else v for v in model.col_lower.tolist()]
    upper = [None if math.isinf(v) else v for v in model.col_upper.tolist()]
    kinds = np.where(model.integer, pulp.LpInteger, pulp.LpContinuous).tolist()
    columns = [
        make(f"x{i}", lo, up, kind)
        for i, (lo, up, kind) in enumerate(zip(lower, upper, kinds, strict=True))
    ]
    a = model.matrix.tocsr()
    starts, cols, vals = a.indptr.tolist(), a.indices.tolist(), a.data.tolist()
    lo_rows, up_rows = model.row_lower.tolist(), model.row_upper.tolist()
    rows: Rows = []
    add = problem.addConstraint
    for r, (begin, end, lo, up) in enumerate(
        zip(starts[:-1], starts[1:], lo_rows, up_rows, strict=True)
    ):
        if begin == end:
            continue  # an empty row: checked against its bounds before building
        expr = pulp.LpAffineExpression(
            zip([columns[j] for j in cols[begin:end]], vals[begin:end], strict=True)
        )
        if lo == up:
            rows.append((r, pulp.LpConstraint(expr, C.LpConstraintEQ, f"r{r}", up)))
            continue
        if up != math.inf:
            rows.append((r, pulp.LpConstraint(expr, C.LpConstraintLE, f"r{r}", up)))
        if lo != -math.inf:
            rows.append((r, pulp.LpConstraint(expr, C.LpConstraintGE, f"g{r}", lo)))
    for _, constraint in rows:
        add(constraint)
    nonzero = np.flatnonzero(model.cost)
    problem.setObjective(
        pulp.LpAffineExpression(
            zip([columns[j] for j in nonzero], model.cost[nonzero].tolist(), strict=True)
        )
    )
    return problem, columns, rows


def make_solver(
    name: str, model: CompiledModel, settings: SolveSettings, deadline: float | None = None
) -> Any:
    """A PuLP solver object for `name` with the common settings in PuLP's own keywords; with a
    `deadline` (a `time.perf_counter()` value), CBC and HiGHS get what is left of it when they
    start, other solvers the time left now."""
    common: dict[str, Any] = {"msg": settings.verbose}
    if deadline is not None:
        common["timeLimit"] = _left(deadline)
    if settings.mip_rel_gap is not None and model.is_mip:
        common["gapRel"] = float(settings.mip_rel_gap)
    if settings.threads is not None:
        common["threads"] = int(settings.threads)
    if name == CBC:
        found = next(c for c in _CBC_CLASSES if c in _found())
        solver = (_CoinUntil if found == "COIN_CMD" else _BundledCbcUntil)(**common)
    elif name == HIGHS:
        if not model.is_mip and settings.lp_method is LpMethod.IPM:
            # The formulation measured interior point as the fast method; a vertex, as the
            # HiGHS backend returns. (The class, not getSolver: its own first argument is
            # called `solver`.)
            common.update(solver="ipm", run_crossover="on")
        solver = _HighsUntil(**common)
    else:
        return pulp.getSolver(name, **common)
    solver.deadline = deadline
    return solver


def _left(deadline: float) -> float:
    return max(deadline - time.perf_counter(), MIN_SOLVER_SECONDS)


class _Until:
    """A PuLP solver whose `timeLimit` is what is left until `deadline` when PuLP reads it.

    PuLP reads `timeLimit` as it launches the solver (CBC: after writing the MPS file), so the
    solver's own clock, which starts then, ends at the request's deadline.
    """

    deadline: float | None = None
    _fixed: float | None = None

    @property
    def timeLimit(self) -> float | None:  # PuLP's name
        if self.deadline is None:
            return self._fixed
        return _left(self.deadline)

    @timeLimit.setter
    def timeLimit(self, value: float | None) -> None:
        self._fixed = value


class _CoinUntil(_Until, pulp.COIN_CMD):  # type: ignore[misc]
    pass


class _BundledCbcUntil(_Until, pulp.PULP_CBC_CMD):  # type: ignore[misc]
    pass


class _HighsUntil(_Until, pulp.HiGHS):  # type: ignore[misc]
    """HiGHS through PuLP: its limit set again just before the run (PuLP sets it before
    building the highspy model), and the run made through the process's scheduler guard, as
    the HiGHS backend's (a changed thread count would otherwise fail)."""

    def callSolver(self, lp: Any) -> None:  # PuLP's name
        from apportion.solver.backends.highs import SCHEDULER

        if self.deadline is not None:
            lp.solverModel.setOptionValue("time_limit", _left(self.deadline))
        SCHEDULER.run(lp.solverModel, self.threads)


def _values(model: CompiledModel, columns: list[pulp.LpVariable]) -> NDArray[np.float64]:
    """The solver's point; a column in no row and not in the objective was never passed to the
    solver (PuLP drops it), so any value within its bounds is optimal: the one nearest 0."""
    raw = [v.varValue for v in columns]
    x = np.array([np.nan if v is None else v for v in raw], dtype=float)
    missing = np.isnan(x)
    if missing.any():
        nearest = np.clip(0.0, model.col_lower[missing], model.col_upper[missing])
        x[missing] = np.where(model.integer[missing], np.ceil(nearest), nearest)
    return x


def _row_duals(model: CompiledModel, rows: Rows, solver: str) -> NDArray[np.float64] | None:
    """Row duals as ∂objective/∂bound (HiGHS's convention); a range row adds its two halves."""
    if model.is_mip:
        return None
    pis = [c.pi for _, c in rows]
    if any(p is None for p in pis):
        return None
    # PuLP's HiGHS interface minimizes −objective for a maximization and hands back the duals
    # of that problem; CBC is told "-max" and answers in the maximization's own terms.
    flip = -1.0 if solver == HIGHS and model.sense is Sense.MAXIMIZE else 1.0
    duals = np.zeros(model.num_rows)
    index = np.array([r for r, _ in rows], dtype=np.int64)
    np.add.at(duals, index, flip * np.array(pis, dtype=float))
    return duals


def _empty_row_infeasible(model: CompiledModel) -> bool:
    """A row without coefficients whose bounds exclude 0 makes the model infeasible."""
    empty = np.diff(model.matrix.tocsr().indptr) == 0
    return bool(np.any((model.row_lower[empty] > 0) | (model.row_upper[empty] < 0)))
