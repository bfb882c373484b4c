"""cvxpy as a backend: the compiled model as one vectorized cvxpy problem, on any solver it has.

The model is handed over as whole sparse blocks — `A_eq x = b`, `A_le x ≤ u`, `A_ge x ≥ l`, with
column bounds as variable bounds — so cvxpy's own compile stays cheap (it is very expensive for
scalar constraint loops). Columns go into one cvxpy variable per run of equal integrality (in
practice one per model block), so MILPs need no per-index attributes.

Sub-solvers are whatever cvxpy has installed that solves LPs: CLARABEL (the default for LPs),
HIGHS, SCS, SCIPY, OSQP, or a commercial solver the user owns. MILPs need a MIP-capable one
(HIGHS by default, SCIPY, ...); the features of each follow its cvxpy interface class.
"""

from __future__ import annotations

import itertools
import time
from functools import cache
from typing import Any, ClassVar

import cvxpy as cp
import numpy as np
from cvxpy import settings as cs
from cvxpy.reductions.solvers import defines
from numpy.typing import NDArray

from apportion.solver.backends.base import (
    Backend,
    Feature,
    LpMethod,
    Solution,
    SolveSettings,
    reduced_costs,
)
from apportion.solver.backends.highs import SCHEDULER
from apportion.solver.backends.verify import empty_model_status, settle
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import Status

# cvxpy's status -> ours, before the returned point is checked (see `verify.settle`).
STATUS_TABLE: dict[str, Status] = {
    cs.OPTIMAL: Status.OPTIMAL,
    cs.OPTIMAL_INACCURATE: Status.FEASIBLE,
    cs.INFEASIBLE: Status.INFEASIBLE,
    cs.INFEASIBLE_INACCURATE: Status.INFEASIBLE,
    cs.UNBOUNDED: Status.UNBOUNDED,
    cs.UNBOUNDED_INACCURATE: Status.UNBOUNDED,
    # HiGHS's presolve cannot always tell which; the HiGHS backend reads it the same way.
    cs.INFEASIBLE_OR_UNBOUNDED: Status.INFEASIBLE,
    cs.USER_LIMIT: Status.TIME_LIMIT,
    cs.SOLVER_ERROR: Status.ERROR,
}

# Preferred order; any other installed LP-capable solver follows.
_PREFERRED = ("CLARABEL", "HIGHS", "SCS", "SCIPY", "OSQP")
# Each solver's own keyword for the common settings (cvxpy passes keywords through as is).
_TIME_LIMIT = {
    "CLARABEL": "time_limit",
    "HIGHS": "time_limit",
    "SCS": "time_limit_secs",
    "OSQP": "time_limit",
    "GUROBI": "TimeLimit",
    "COPT": "TimeLimit",
}
_MIP_GAP = {"HIGHS": "mip_rel_gap", "GUROBI": "MIPGap", "COPT": "RelGap"}
_THREADS = {"CLARABEL": "max_threads", "HIGHS": "threads", "GUROBI": "Threads"}
# First-order solvers stop at 1e-4..1e-5 by default: far from the other backends' answers.
_ACCURACY: dict[str, dict[str, Any]] = {
    "SCS": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000},
    "OSQP": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 200_000, "polishing": True},
}
_HIGHS_LP_METHOD = {LpMethod.SIMPLEX: "simplex", LpMethod.IPM: "ipm", LpMethod.PDLP: "pdlp"}


@cache
def installed_lp_solvers() -> tuple[str, ...]:
    """Installed cvxpy solvers that take LPs (conic and QP interfaces), preferred first."""
    usable = set(defines.SOLVER_MAP_CONIC) | set(defines.SOLVER_MAP_QP)
    installed = [s for s in defines.INSTALLED_SOLVERS if s in usable]
    return tuple(sorted(installed, key=lambda s: (*_PREFERRED, s).index(s)))


def mip_capable(solver: str) -> bool:
    interface = defines.SOLVER_MAP_CONIC.get(solver)
    return bool(getattr(interface, "MIP_CAPABLE", False))


class CvxpyBackend(Backend):
    name: ClassVar[str] = "cvxpy"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.LP, Feature.MILP, Feature.DUALS})

    def available_solvers(self) -> list[str]:
        return list(installed_lp_solvers())

    def features_for(self, solver: str | None) -> frozenset[Feature]:
        if solver is None:
            # The default is picked per model: a MIP-capable solver for MILPs, if one exists.
            mip = any(mip_capable(s) for s in installed_lp_solvers())
            return self.features if mip else self.features - {Feature.MILP}
        able = {Feature.LP, Feature.DUALS}
        if mip_capable(self.resolve_solver(solver) or solver):
            able.add(Feature.MILP)
        return frozenset(able)

    def default_solver(self, is_mip: bool) -> str:
        solvers = installed_lp_solvers()
        if is_mip:
            return next((s for s in solvers if mip_capable(s)), solvers[0])
        return solvers[0]

    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        solver = self.resolve_solver(settings.solver) or self.default_solver(model.is_mip)
        if model.is_mip and not mip_capable(solver):
            raise ValueError(f"cvxpy solver {solver} cannot solve MILP models")
        if model.num_cols == 0:
            status = empty_model_status(model)
            value = model.offset if status.has_solution else None
            return Solution(status, value, np.zeros(0), self.name, solver)
        started = time.perf_counter()
        problem, parts, rows = to_cvxpy(model)
        built = time.perf_counter()
        # cvxpy's HIGHS interface shares HiGHS's process-wide thread scheduler.
        with SCHEDULER.sized(settings.threads):
            raw, error = _run(problem, solver, solver_options(solver, model, settings), settings)
        finished = time.perf_counter()
        compile_seconds = float(problem.compilation_time or 0.0)
        x = _point(parts)
        claimed = STATUS_TABLE.get(raw, Status.ERROR)
        status, note = settle(claimed, model, x, limit_hit=raw == cs.USER_LIMIT)
        stats = problem.solver_stats
        gap = getattr(stats.extra_stats, "mip_gap", None) if stats is not None else None
        duals = _row_duals(model, rows) if status.has_solution else None
        return Solution(
            status=status,
            objective=_objective(model, x) if status.has_solution else None,
            x=x if x is not None else np.zeros(model.num_cols),
            backend=self.name,
            solver=solver,
            detail="; ".join(filter(None, [raw or "", error, note])),
            row_dual=duals,
            col_dual=reduced_costs(model, duals),
            iterations=int(stats.num_iters or 0) if stats is not None else 0,
            build_seconds=built - started + compile_seconds,
            solve_seconds=finished - built - compile_seconds,
            mip_gap=float(gap)
            if model.is_mip and gap is not None and status.has_solution
            else None,
        )


def _run(
    problem: cp.Problem, solver: str, options: dict[str, Any], settings: SolveSettings
) -> tuple[str, str]:
    """Solve; a solver failure becomes SOLVER_ERROR with its message, not an exception."""
    try:
        problem.solve(solver=solver, verbose=settings.verbose, **options)  # type: ignore[no-untyped-call]
    except cp.error.SolverError as exc:
        return cs.SOLVER_ERROR, str(exc)
    return str(problem.status), ""


def _point(parts: list[cp.Variable]) -> NDArray[np.float64] | None:
    """The solver's point in column order, None when it returned none."""
    values = []
    for part in parts:
        if part.value is None:
            return None
        values.append(np.asarray(part.value, dtype=float).reshape(-1))
    return np.concatenate(values)


def _objective(model: CompiledModel, x: NDArray[np.float64] | None) -> float | None:
    # From the point, not the solver's printout: every backend reports the same quantity.
    return None if x is None else float(model.cost @ x + model.offset)


RowGroup = tuple[cp.Constraint, NDArray[np.int64], float]


def to_cvxpy(model: CompiledModel) -> tuple[cp.Problem, list[cp.Variable], list[RowGroup]]:
    """The model as a cvxpy problem: variables per integrality run, three matrix constraints.

    Returns the problem, its variables (in column order) and, per constraint, the model rows
    it holds with the sign that turns cvxpy's dual into ∂objective/∂bound (HiGHS's convention).
    """
    parts = [
        cp.Variable(
            stop - start,
            integer=bool(model.integer[start]),
            bounds=[model.col_lower[start:stop], model.col_upper[start:stop]],
        )
        for start, stop in _runs(model.integer)
    ]
    x = parts[0] if len(parts) == 1 else cp.hstack(parts)  # type: ignore[attr-defined]
    a = model.matrix.tocsr()
    lo, up = model.row_lower, model.row_upper
    equal = lo == up
    eq = np.flatnonzero(np.isfinite(up) & equal)
    le = np.flatnonzero(np.isfinite(up) & ~equal)
    ge = np.flatnonzero(np.isfinite(lo) & ~equal)
    rows: list[RowGroup] = []
    if eq.size:
        rows.append((a[eq] @ x == up[eq], eq, -1.0))
    if le.size:
        rows.append((a[le] @ x <= up[le], le, -1.0))
    if ge.size:
        rows.append((a[ge] @ x >= lo[ge], ge, 1.0))
    objective = model.cost @ x
    goal = cp.Maximize(objective) if model.sense is Sense.MAXIMIZE else cp.Minimize(objective)
    return cp.Problem(goal, [c for c, _, _ in rows]), parts, rows


def _runs(flags: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """[start, stop) ranges of equal values in `flags`."""
    cuts = np.flatnonzero(np.diff(flags.astype(np.int8))) + 1
    return list(itertools.pairwise([0, *cuts.tolist(), int(flags.size)]))


def solver_options(solver: str, model: CompiledModel, settings: SolveSettings) -> dict[str, Any]:
    """The common settings in `solver`'s own keywords."""
    options: dict[str, Any] = dict(_ACCURACY.get(solver, {}))
    if solver == "SCIPY":
        scipy: dict[str, Any] = {"method": "highs"}
        if settings.time_limit is not None:
            scipy["time_limit"] = float(settings.time_limit)
        if settings.mip_rel_gap is not None and model.is_mip:
            scipy["mip_rel_gap"] = float(settings.mip_rel_gap)
        return {"scipy_options": scipy}
    if settings.time_limit is not None and solver in _TIME_LIMIT:
        options[_TIME_LIMIT[solver]] = float(settings.time_limit)
    if settings.mip_rel_gap is not None and model.is_mip and solver in _MIP_GAP:
        options[_MIP_GAP[solver]] = float(settings.mip_rel_gap)
    if settings.threads is not None and solver in _THREADS:
        options[_THREADS[solver]] = int(settings.threads)
    if solver == "HIGHS" and not model.is_mip and settings.lp_method in _HIGHS_LP_METHOD:
        # Through `highs_options`: a bare `solver=` keyword would clash with cvxpy's own.
        highs: dict[str, Any] = {"solver": _HIGHS_LP_METHOD[settings.lp_method]}
        if settings.lp_method is LpMethod.IPM:
            highs["run_crossover"] = "on"  # a vertex, as the HiGHS backend returns
        options["highs_options"] = highs
    return options


def _row_duals(model: CompiledModel, rows: list[RowGroup]) -> NDArray[np.float64] | None:
    """Row duals as ∂objective/∂bound, HiGHS's convention, from cvxpy's per-constraint duals."""
    if model.is_mip:
        return None
    duals = np.zeros(model.num_rows)
    # cvxpy reports the duals of the minimization it solves; a maximization flips them.
    flip = -1.0 if model.sense is Sense.MAXIMIZE else 1.0
    for constraint, index, sign in rows:
        value = constraint.dual_value
        if value is None:
            return None
        duals[index] += flip * sign * np.asarray(value, dtype=float).reshape(-1)
    return duals
