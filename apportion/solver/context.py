"""The context a formulation solves its models in: the request's options, one time budget for
every model, the backend chosen by capability, and the books on what was solved.

A formulation asks with a `SolveRequest`; the context answers with a `Solution`. Nothing a
policy learns travels back through the context: the policy returns that in its `Outcome`. Model
export is its own build-only path (`ExportContext`), invisible to formulations.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.solver.backends import (
    Backend,
    Feature,
    LpMethod,
    OnBound,
    OnIncumbent,
    Scalar,
    Session,
    Solution,
    SolveSettings,
    capable_of,
    choose_backend,
    exporter,
)
from apportion.solver.backends.work import SEARCH_STEP, UNITS_PER_SECOND, WorkClock
from apportion.solver.errors import InputError
from apportion.solver.model import CompiledModel, Model
from apportion.solver.options import SolveOptions
from apportion.solver.status import Status, Termination

Start = tuple[NDArray[np.int64], NDArray[np.float64]]
#: The least a model is ever given: a solver asked for 0 s would not even read its start.
MIN_SECONDS = 0.01


@dataclass(frozen=True)
class TimeBudget:
    """The request's time limit, shared by every model a policy solves in one request. With a
    `work` clock (`clock: "work"`) its seconds are modelled from counted work, never read
    from the wall clock (`solver.backends.work`)."""

    seconds: float | None
    started: float = field(default_factory=time.perf_counter)
    work: WorkClock | None = None

    @classmethod
    def for_options(cls, options: SolveOptions) -> TimeBudget:
        return cls(options.time_limit, work=WorkClock() if options.clock == "work" else None)

    def elapsed(self) -> float:
        if self.work is not None:
            return self.work.seconds()
        return time.perf_counter() - self.started

    def charge(self, units: float) -> None:
        """Count `units` of work done (nothing to count on the wall clock)."""
        if self.work is not None:
            self.work.charge(units)

    def within(self, seconds: float) -> TimeBudget:
        """A budget of `seconds` from now on the same clock (its work counts here too)."""
        return TimeBudget(self.elapsed() + seconds, self.started, self.work)

    def step(self, count: int = 1) -> None:
        """Count `count` steps of a policy's own search (a start or move weighed)."""
        self.charge(count * SEARCH_STEP)

    @property
    def termination(self) -> Termination:
        """Why a search stopped when this budget was spent."""
        return Termination.TIME_LIMIT if self.work is None else Termination.ITERATION_LIMIT

    def left(self) -> float | None:
        """Seconds left (never below `MIN_SECONDS`, or the whole limit when that is smaller);
        None without a limit."""
        if self.seconds is None:
            return None
        return max(self.seconds - self.elapsed(), min(MIN_SECONDS, self.seconds))

    def spent(self) -> bool:
        return self.seconds is not None and self.elapsed() >= self.seconds

    def share(self, fraction: float) -> float | None:
        """`fraction` of what is left; None without a limit."""
        left = self.left()
        return None if left is None else max(fraction * left, MIN_SECONDS)

    def fraction_of_total(self, fraction: float) -> float | None:
        """The time by which `fraction` of the whole budget is used, as seconds from now."""
        if self.seconds is None:
            return None
        return max(fraction * self.seconds - self.elapsed(), MIN_SECONDS)


@dataclass(frozen=True)
class SolveRequest:
    """One model to solve, with the formulation's preferences for it (used where the user set
    none): `lp_method` and `mip_gap`; `start`, a MILP starting point (column indices, values)
    for backends that take one; `relax` drops integrality; `time_limit` caps this model below
    what is left of the budget; `tuning` holds per-backend search settings that pay off on the
    formulation's models; `on_incumbent` watches a MILP's improving solutions and `on_bound`
    its dual bound where the backend can. `auxiliary` marks a model that is not the policy's own
    (a shortcut, a relaxation for a bound, a starting point): a build-only run (`export_model`)
    leaves it unsolved, so the policy goes on to the model it stands for."""

    model: Model
    lp_method: LpMethod = LpMethod.AUTO
    mip_gap: float | None = None
    start: Start | None = None
    relax: bool = False
    time_limit: float | None = None
    tuning: Mapping[str, Mapping[str, Scalar]] = field(default_factory=dict)
    on_incumbent: OnIncumbent | None = None
    on_bound: OnBound | None = None
    auxiliary: bool = False


@dataclass(frozen=True)
class SolveStats:
    """What one solve cost and what it solved, for the request's solver report."""

    backend: str
    solver: str
    iterations: int
    build_seconds: float
    solve_seconds: float
    size: tuple[int, int, int, int]  # columns, rows, nonzeros, integer columns

    @classmethod
    def of(cls, compiled: CompiledModel, solution: Solution, compile_seconds: float) -> SolveStats:
        size = (
            compiled.num_cols,
            compiled.num_rows,
            int(compiled.matrix.nnz),
            int(compiled.integer.sum()),
        )
        return cls(
            solution.backend,
            solution.solver,
            solution.iterations,
            compile_seconds + solution.build_seconds,
            solution.solve_seconds,
            size,
        )


class RecordedSession:
    """A backend's kept model whose every re-solve is booked like a cold one."""

    def __init__(
        self,
        session: Session,
        compiled: CompiledModel,
        books: list[SolveStats],
        compile_seconds: float,
        budget: TimeBudget,
    ) -> None:
        self._session, self.compiled, self._books = session, compiled, books
        self._budget = budget
        self.change_coefficients = session.change_coefficients
        self.change_row_bounds = session.change_row_bounds
        self.change_col_bounds = session.change_col_bounds
        self.change_col_costs = session.change_col_costs
        self.keep_point = session.keep_point
        # The model layer's compile is booked with the first solve.
        self._compile_seconds = compile_seconds

    def solve(self) -> Solution:
        solution = self._session.solve()
        self._budget.charge(solution.work)
        self._books.append(SolveStats.of(self.compiled, solution, self._compile_seconds))
        self._compile_seconds = 0.0
        return solution


@dataclass
class SolveContext:
    """Runs a formulation's models on a backend chosen by capability.

    What a solve says travels back in its `Solution`, and what the policy makes of it in its
    `Outcome`; the context keeps only the books (`books`: one entry per solve, appended, never
    read by a formulation), from which the pipeline writes the solver report's counters.
    """

    options: SolveOptions
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(None))
    books: list[SolveStats] = field(default_factory=list)

    @classmethod
    def for_request(cls, options: SolveOptions) -> SolveContext:
        return cls(options, TimeBudget.for_options(options))

    def settings(
        self,
        lp_method: LpMethod = LpMethod.AUTO,
        mip_gap: float | None = None,
        start: Start | None = None,
        time_limit: float | None = None,
    ) -> SolveSettings:
        """The user's options, falling back to the formulation's preferences where unset; the
        time limit is what is left of the budget (or less, if the formulation asks for less)."""
        method = (
            self.options.lp_method if self.options.lp_method is not LpMethod.AUTO else lp_method
        )
        left = self.budget.left()
        if time_limit is not None:
            left = time_limit if left is None else min(left, time_limit)
        wall, work = self._limit(left)
        return SolveSettings(
            time_limit=wall,
            work_limit=work,
            mip_rel_gap=self.options.mip_gap if self.options.mip_gap is not None else mip_gap,
            threads=self.options.threads,
            lp_method=method,
            solver=self.options.solver,
            verbose=self.options.verbose,
            start=start,
        )

    def _limit(self, seconds: float | None) -> tuple[float | None, float | None]:
        """A limit of `seconds` as the backend takes it: (wall seconds, work units)."""
        if self.budget.work is None or seconds is None:
            return seconds, None
        return None, seconds * UNITS_PER_SECOND

    def backend_for(
        self, is_mip: bool, lp_method: LpMethod, wants: frozenset[Feature] = frozenset()
    ) -> Backend:
        method = self.settings(lp_method).lp_method
        return choose_backend(self.options.backend, is_mip, method, wants)

    def solve(self, request: SolveRequest) -> Solution:
        """Compile and solve one model (see `SolveRequest`)."""
        started = time.perf_counter()
        compiled = request.model.compile()
        compile_seconds = time.perf_counter() - started
        if request.relax:
            compiled = replace(compiled, integer=np.zeros_like(compiled.integer))
        settings = replace(
            self.settings(request.lp_method, request.mip_gap, request.start, request.time_limit),
            tuning=request.tuning,
            on_incumbent=request.on_incumbent,
            on_bound=request.on_bound,
        )
        shaped = compiled.shape is not None
        backend = choose_backend(
            self.options.backend, compiled.is_mip, settings.lp_method, shaped=shaped
        )
        _check_mip(backend, settings.solver, compiled)
        solution = backend.solve(compiled, settings)
        self.budget.charge(solution.work)
        self.books.append(SolveStats.of(compiled, solution, compile_seconds))
        if (
            Feature.LP not in backend.features
            and solution.status is not Status.OPTIMAL
            and not self.budget.spent()
        ):
            # A backend for the model's shape alone that could not certify its answer hands
            # the model to the general choice, with what is left of the budget.
            general = choose_backend(self.options.backend, compiled.is_mip, settings.lp_method)
            wall, work = self._limit(self.budget.left())
            solution = general.solve(compiled, replace(settings, time_limit=wall, work_limit=work))
            self.budget.charge(solution.work)
            self.books.append(SolveStats.of(compiled, solution, 0.0))
        return solution

    def for_its_shape(self, model: Model, lp_method: LpMethod) -> bool:
        """Whether `model` would go to a backend for its declared shape (`Feature.BLOCKS`),
        which solves each model cold: a sequence of such models is then best solved cold
        rather than in a session."""
        if model.shape is None:
            return False
        method = self.settings(lp_method).lp_method
        first = choose_backend(self.options.backend, False, method, shaped=True)
        return Feature.BLOCKS in first.features

    def session(self, model: Model, lp_method: LpMethod) -> RecordedSession | None:
        """The compiled model kept by a backend that can re-solve it warm, or None when the
        chosen backend cannot: the caller then solves cold."""
        backend = self.backend_for(False, lp_method, frozenset({Feature.SESSION}))
        if Feature.SESSION not in backend.features_for(self.options.solver):
            return None
        started = time.perf_counter()
        compiled = model.compile()
        seconds = time.perf_counter() - started
        session = backend.session(compiled, self.settings(lp_method))
        return RecordedSession(session, compiled, self.books, seconds, self.budget)


class Captured(Exception):
    """A build-only run reached the policy's own model: here it is, compiled and written."""

    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__(compiled.name)
        self.compiled = compiled


class ExportContext(SolveContext):
    """A build-only context: the first model a policy asks to solve that is its own (not
    `auxiliary`) is written to `path` (.lp or .mps) by a backend that exports, and the run ends
    there (`Captured`). Auxiliary models are left unsolved (`not_solved`), so the policy goes on
    to its own. Every policy gets model export this way without code of its own."""

    def __init__(self, options: SolveOptions, path: str) -> None:
        super().__init__(options, TimeBudget.for_options(options))
        self.path = path

    def solve(self, request: SolveRequest) -> Solution:
        if request.auxiliary:
            return Solution(
                Status.ERROR,
                None,
                np.zeros(0),
                backend="export",
                solver="export",
                detail="a build-only run solves no model",
                termination=Termination.NOT_SOLVED,
            )
        self._capture(request.model)
        raise AssertionError("unreachable: _capture always raises")

    def session(self, model: Model, lp_method: LpMethod) -> RecordedSession | None:
        self._capture(model)
        return None

    def _capture(self, model: Model) -> None:
        compiled = model.compile()
        exporter().export(compiled, self.path)
        raise Captured(compiled)


def _check_mip(backend: Backend, solver: str | None, model: CompiledModel) -> None:
    """A MILP handed to a backend (or sub-solver) without MILP support is an input error that
    names the alternatives; caught here too for policies whose class does not say MILP."""
    if model.is_mip and Feature.MILP not in backend.features_for(solver):
        who = backend.name + (f" with solver {solver}" if solver else "")
        raise InputError.single(
            ("options", "solver" if solver else "backend"),
            f"{who} cannot solve MILP models ({model.name}); use "
            + ", ".join(["auto", *capable_of(Feature.MILP)]),
        )


def describe(books: list[SolveStats], backend: str) -> dict[str, Any]:
    """The books of a request, for the solver report: the backends in the order first used,
    totals, and the size of the last model solved."""
    last = books[-1] if books else None
    cols, rows, nnz, ints = last.size if last else (0, 0, 0, 0)
    used = list(dict.fromkeys(entry.backend for entry in books))
    return {
        "backend": "+".join(used) or backend,
        "solver": last.solver if last else "none",
        "solves": len(books),
        "iterations": sum(entry.iterations for entry in books),
        "variables": cols,
        "constraints": rows,
        "nonzeros": nnz,
        "integer_variables": ints,
        "build_seconds": sum(entry.build_seconds for entry in books),
        "solve_seconds": sum(entry.solve_seconds for entry in books),
    }
