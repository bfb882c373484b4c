"""HiGHS through highspy: the default backend. The whole model is passed in one call."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import highspy
import numpy as np

from apportion.solver.backends.base import (
    Backend,
    Feature,
    LpMethod,
    Solution,
    SolveSettings,
)
from apportion.solver.backends.highs_stops import WorkMeter, limit_work, watch, work_of
from apportion.solver.backends.names import portable_names
from apportion.solver.backends.verify import Point, classify
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import Status, Termination, relative_gap

_MS = highspy.HighsModelStatus
_T = Termination
# HiGHS model status -> why it stopped, one row per code; a code missing here (a newer HiGHS)
# reads as `unknown`. The answer's class then follows from the point (`verify.classify`).
TERMINATION: dict[object, Termination] = {
    _MS.kOptimal: _T.OPTIMAL,
    _MS.kModelEmpty: _T.OPTIMAL,
    _MS.kInfeasible: _T.INFEASIBLE,
    _MS.kUnboundedOrInfeasible: _T.INFEASIBLE_OR_UNBOUNDED,
    _MS.kUnbounded: _T.UNBOUNDED,
    _MS.kTimeLimit: _T.TIME_LIMIT,
    _MS.kIterationLimit: _T.ITERATION_LIMIT,
    _MS.kSolutionLimit: _T.SOLUTION_LIMIT,
    _MS.kObjectiveBound: _T.OBJECTIVE_LIMIT,
    _MS.kObjectiveTarget: _T.OBJECTIVE_LIMIT,
    _MS.kInterrupt: _T.INTERRUPTED,
    _MS.kHighsInterrupt: _T.INTERRUPTED,  # type: ignore[attr-defined]
    _MS.kUnknown: _T.UNKNOWN,
    _MS.kNotset: _T.SOLVER_ERROR,
    _MS.kLoadError: _T.SOLVER_ERROR,
    _MS.kModelError: _T.SOLVER_ERROR,
    _MS.kPresolveError: _T.SOLVER_ERROR,
    _MS.kSolveError: _T.SOLVER_ERROR,
    _MS.kPostsolveError: _T.SOLVER_ERROR,
    _MS.kMemoryLimit: _T.SOLVER_ERROR,
}
_FEASIBLE_POINT = 2  # HiGHS's kSolutionStatusFeasible

_DUAL, _PRIMAL = 1, 4  # HiGHS simplex_strategy values

_LP_METHOD = {
    LpMethod.AUTO: "choose",
    LpMethod.SIMPLEX: "simplex",
    LpMethod.IPM: "ipm",
    LpMethod.PDLP: "pdlp",
}


def to_highs_lp(model: CompiledModel, with_names: bool = False) -> highspy.HighsLp:
    """The compiled model as a HighsLp (column-wise matrix, one copy of each array)."""
    lp = highspy.HighsLp()
    lp.num_col_ = model.num_cols
    lp.num_row_ = model.num_rows
    lp.sense_ = (
        highspy.ObjSense.kMaximize if model.sense is Sense.MAXIMIZE else highspy.ObjSense.kMinimize
    )
    lp.offset_ = model.offset
    lp.col_cost_ = model.cost
    lp.col_lower_ = model.col_lower
    lp.col_upper_ = model.col_upper
    lp.row_lower_ = model.row_lower
    lp.row_upper_ = model.row_upper
    matrix = model.matrix
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = model.num_cols
    lp.a_matrix_.num_row_ = model.num_rows
    lp.a_matrix_.start_ = matrix.indptr.astype(np.int32)
    lp.a_matrix_.index_ = matrix.indices.astype(np.int32)
    lp.a_matrix_.value_ = matrix.data.astype(np.float64)
    if model.is_mip:
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous
            for flag in model.integer
        ]
    if with_names:
        lp.col_names_ = portable_names(model.col_names())
        lp.row_names_ = portable_names(model.row_names())
    return lp


def pass_model(h: highspy.Highs, model: CompiledModel) -> None:
    """Hand the compiled model to `h` by its arrays (no names): HiGHS reads them in place,
    where a `HighsLp` copies each one through Python first (most of a small model's passing)."""
    matrix = model.matrix
    maximize = model.sense is Sense.MAXIMIZE
    h.passModel(
        model.num_cols,
        model.num_rows,
        int(matrix.nnz),
        int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize),
        model.offset,
        model.cost,
        model.col_lower,
        model.col_upper,
        model.row_lower,
        model.row_upper,
        matrix.indptr.astype(np.int32),
        matrix.indices.astype(np.int32),
        matrix.data.astype(np.float64),
        # One entry per column is read whatever the model (an LP's are all continuous, 0).
        model.integer.astype(np.int32) * int(highspy.HighsVarType.kInteger),
    )


class Scheduler:
    """Runs of HiGHS in this process, kept consistent with its one task scheduler.

    HiGHS keeps one scheduler per process, sized by the `threads` option of the run that creates
    it (0, the default, means half the cores); a later run that sets another size fails at once
    with model status "Not Set", and a default run takes whatever size is there.
    `Highs.resetGlobalScheduler` ends it so the next run creates one of its own size, but calling
    it while any Highs instance runs, in any thread, is undefined behaviour (HiGHS's C API
    documentation). So runs of the size in place go on together; a run of another size waits
    until none is running, resets, then goes. Blocking resets join the old worker threads, so
    none outlive the change.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._size: int | None = None  # what our runs sized it for; None: not known yet
        self._running = 0
        # A run started from a callback of a run in the same thread must not wait for that one.
        self._inside = threading.local()

    def run(self, h: highspy.Highs, threads: int | None) -> None:
        size = int(threads or 0)
        with self._sized(size, reset=False):
            h.run()
        if size and h.getModelStatus() == _MS.kNotset:
            # Another HiGHS user in this process (cvxpy, PuLP) sized it since: size it again.
            with self._sized(size, reset=True):
                h.run()

    @contextmanager
    def sized(self, threads: int | None) -> Iterator[None]:
        """Hold the scheduler at `threads` (None: HiGHS's default) while the block runs HiGHS
        through a library that calls `run` itself (cvxpy's HIGHS)."""
        with self._sized(int(threads or 0), reset=False):
            yield

    @contextmanager
    def _sized(self, size: int, reset: bool) -> Iterator[None]:
        nested = getattr(self._inside, "runs", 0)
        with self._changed:
            change = not nested and (reset or self._size != size)
            while change and self._running:
                self._changed.wait()
            if change:
                highspy.Highs.resetGlobalScheduler(True)
                self._size = size
            self._running += 1
        self._inside.runs = nested + 1
        try:
            yield
        finally:
            self._inside.runs = nested
            with self._changed:
                self._running -= 1
                self._changed.notify_all()


#: The process's one guard: the highs and pulp backends run HiGHS through it; code that runs
#: HiGHS through another library holds it with `SCHEDULER.sized`.
SCHEDULER = Scheduler()


class HighsBackend(Backend):
    name: ClassVar[str] = "highs"
    features: ClassVar[frozenset[Feature]] = frozenset(
        {
            Feature.LP,
            Feature.MILP,
            Feature.DUALS,
            Feature.WARM_START,
            Feature.EXPORT,
            Feature.INCUMBENTS,
            Feature.SESSION,
        }
    )

    def available_solvers(self) -> list[str]:
        return ["choose", "simplex", "ipm", "pdlp"]

    def features_for(self, solver: str | None) -> frozenset[Feature]:
        # simplex, ipm and pdlp name LP algorithms: a MILP goes to HiGHS's MIP solver whatever
        # they say, so asking for one on a MILP is refused rather than silently ignored.
        if solver in (None, "choose"):
            return self.features
        return self.features - {Feature.MILP}

    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        solver = self.resolve_solver(settings.solver)
        if model.is_mip and Feature.MILP not in self.features_for(solver):
            raise ValueError(f"HiGHS's {solver} is an LP algorithm: a MILP takes solver choose")
        h = highspy.Highs()
        meter = configure(h, model, settings)
        pass_model(h, model)
        if settings.start is not None and model.is_mip:
            # An incumbent from the start: a time limit then always returns something feasible.
            index, value = settings.start
            h.setSolution(int(index.size), index.astype(np.int32), value.astype(np.float64))
        watched = settings.on_incumbent is not None or settings.on_bound is not None
        if model.is_mip and watched:
            watch(h, model.num_cols, settings.on_incumbent, settings.on_bound)
        started = time.perf_counter()
        SCHEDULER.run(h, settings.threads)
        return read_solution(h, model, time.perf_counter() - started, meter)

    def session(self, model: CompiledModel, settings: SolveSettings) -> HighsSession:
        return HighsSession(model, settings)

    def export(self, model: CompiledModel, path: str) -> None:
        """Write the model as .lp or .mps (by the file's suffix) with readable names; raises
        OSError when the file cannot be written."""
        # HiGHS crashes the process on a path it cannot open: find out in Python first.
        with open(path, "w"):
            pass
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.passModel(to_highs_lp(model, with_names=True))
        if h.writeModel(path) == highspy.HighsStatus.kError:
            raise OSError(f"cannot write the model to {path}")


def configure(h: highspy.Highs, model: CompiledModel, settings: SolveSettings) -> WorkMeter | None:
    """Set the solve's options; under a work limit, the meter that stops a MILP."""
    h.setOptionValue("output_flag", settings.verbose)
    method = settings.solver or _LP_METHOD[settings.lp_method]
    if not model.is_mip:
        h.setOptionValue("solver", method)
        if method == "ipm":
            # A vertex answer (crossover) gives a trustworthy "optimal" and exact zeros.
            h.setOptionValue("run_crossover", "on")
    if settings.time_limit is not None:
        h.setOptionValue("time_limit", float(settings.time_limit))
    meter = None
    if settings.work_limit is not None:
        meter = limit_work(h, model, settings.work_limit)
    if settings.mip_rel_gap is not None:
        h.setOptionValue("mip_rel_gap", float(settings.mip_rel_gap))
    if settings.threads is not None:
        h.setOptionValue("threads", int(settings.threads))
    for name, value in settings.tuning.get(HighsBackend.name, {}).items():
        if h.setOptionValue(name, value) == highspy.HighsStatus.kError:
            raise ValueError(f"HiGHS rejects option {name}={value!r}")
    return meter


def read_solution(
    h: highspy.Highs, model: CompiledModel, seconds: float, meter: WorkMeter | None = None
) -> Solution:
    raw = h.getModelStatus()
    info = h.getInfo()
    termination = TERMINATION.get(raw, Termination.UNKNOWN)
    if meter is not None:
        termination = meter.termination(termination)
    # HiGHS checks its own point (it can call a model optimal while that point violates it):
    # its primal solution status is the verdict on the point, no second check is needed.
    has_point = info.primal_solution_status == _FEASIBLE_POINT or not model.num_cols
    status, note = classify(termination, Point.FEASIBLE if has_point else Point.NONE)
    solution = h.getSolution()
    x = np.asarray(solution.col_value, dtype=float)
    if x.size != model.num_cols:
        x = np.zeros(model.num_cols)
    detail = "; ".join(filter(None, [h.modelStatusToString(raw), note]))
    if status.has_solution and not (
        math.isfinite(info.objective_function_value) and np.isfinite(x).all()
    ):
        # An infinite or overflowed offset ends "optimal" with an infinite objective (HiGHS
        # reads costs and bounds ≥ 1e20 as infinite): no answer to return.
        status, detail = Status.ERROR, f"{detail} with a non-finite objective or point"
    duals = np.asarray(solution.row_dual, dtype=float) if solution.dual_valid else None
    reduced = np.asarray(solution.col_dual, dtype=float) if solution.dual_valid else None
    iterations = info.simplex_iteration_count + info.ipm_iteration_count + info.pdlp_iteration_count
    objective = info.objective_function_value if status.has_solution else None
    return Solution(
        status=status,
        objective=objective,
        x=x,
        backend=HighsBackend.name,
        solver="mip" if model.is_mip else _option(h, "solver"),
        detail=detail,
        row_dual=duals,
        col_dual=reduced,
        iterations=max(int(iterations), int(info.mip_node_count) if model.is_mip else 0),
        solve_seconds=seconds,
        mip_gap=_gap(info, model.sense) if model.is_mip and status.has_solution else None,
        work=work_of(info, model.is_mip, meter),
        extra={"mip_dual_bound": float(info.mip_dual_bound)} if model.is_mip else {},
        termination=termination,
    )


def _gap(info: highspy.HighsInfo, sense: Sense) -> float:
    """The gap by apportion's one definition (`status.relative_gap`)."""
    bound, value = float(info.mip_dual_bound), float(info.objective_function_value)
    return relative_gap(bound, value, maximize=sense is Sense.MAXIMIZE)


def _option(h: highspy.Highs, name: str) -> str:
    value = h.getOptionValue(name)
    # highspy returns (status, value) in some versions and the bare value in others.
    return str(value[1] if isinstance(value, tuple) else value)


class HighsSession:
    """One Highs instance kept across re-solves of a model that changes a little each time.

    Iterative formulations (water filling) change a few coefficients and bounds between solves;
    keeping the instance lets HiGHS hot-start the simplex from the last basis instead of solving
    from scratch (FORMULATIONS §8; the `water_filling` bench rows).
    """

    def __init__(self, model: CompiledModel, settings: SolveSettings) -> None:
        self.model = model
        self._threads = settings.threads
        self._h = highspy.Highs()
        configure(self._h, model, settings)
        pass_model(self._h, model)

    def change_coefficients(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """A[row, col] = value for each triple (HiGHS has no batch call for this)."""
        for r, c, v in zip(rows.tolist(), cols.tolist(), values.tolist(), strict=True):
            self._h.changeCoeff(r, c, v)

    def change_row_bounds(self, rows: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        if rows.size:
            self._h.changeRowsBounds(  # type: ignore[attr-defined]
                rows.size,
                rows.astype(np.int32),
                np.asarray(lower, dtype=float),
                np.asarray(upper, dtype=float),
            )

    def change_col_bounds(self, cols: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        if cols.size:
            self._h.changeColsBounds(
                cols.size,
                cols.astype(np.int32),
                np.asarray(lower, dtype=float),
                np.asarray(upper, dtype=float),
            )

    def change_col_costs(self, cols: np.ndarray, costs: np.ndarray) -> None:
        if cols.size:
            self._h.changeColsCost(cols.size, cols.astype(np.int32), np.asarray(costs, dtype=float))

    def keep_point(self, primal: bool) -> None:
        """Re-solves after the first reuse the basis with a simplex method: the primal one when
        the changes keep the last point feasible (it then needs only a few iterations)."""
        self._h.setOptionValue("solver", "simplex")
        self._h.setOptionValue("simplex_strategy", _PRIMAL if primal else _DUAL)

    def solve(self) -> Solution:
        started = time.perf_counter()
        SCHEDULER.run(self._h, self._threads)
        return read_solution(self._h, self.model, time.perf_counter() - started)
