"""The context a formulation solves its models in: the request's options, one time budget for
every model, the backend chosen by capability, and the books on what was solved.

A formulation asks; the context answers with a `Solution` and keeps its own statistics. Nothing
a policy learns travels back through it: the policy returns that in its `Outcome`.
"""

from __future__ import annotations

import time
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
from apportion.solver.errors import InputError
from apportion.solver.model import CompiledModel, Model
from apportion.solver.options import SolveOptions
from apportion.solver.status import Status

Start = tuple[NDArray[np.int64], NDArray[np.float64]]
#: The least a model is ever given: a solver asked for 0 s would not even read its start.
MIN_SECONDS = 0.01


@dataclass(frozen=True)
class TimeBudget:
    """The request's time limit, shared by every model a policy solves in one request."""

    seconds: float | None
    started: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

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


@dataclass
class SolveContext:
    """Runs a formulation's models on a backend chosen by capability and keeps the books.

    With `export_path` set it is build-only: the first model a policy asks to solve is written
    there (.lp or .mps) by a backend that exports, and every solve answers `error` ("exported,
    not solved"), so the policy ends as it would on a failed solve. Every policy gets model
    export this way without code of its own.
    """

    options: SolveOptions
    export_path: str | None = None
    budget: TimeBudget = field(default_factory=lambda: TimeBudget(None))
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    solves: int = 0
    iterations: int = 0
    last: Solution | None = None
    exported: CompiledModel | None = None
    backends_used: list[str] = field(default_factory=list)
    size: tuple[int, int, int, int] = (0, 0, 0, 0)

    @classmethod
    def for_request(cls, options: SolveOptions, export_path: str | None = None) -> SolveContext:
        return cls(options, export_path, TimeBudget(options.time_limit))

    @property
    def exporting(self) -> bool:
        return self.export_path is not None

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
        return SolveSettings(
            time_limit=left,
            mip_rel_gap=self.options.mip_gap if self.options.mip_gap is not None else mip_gap,
            threads=self.options.threads,
            lp_method=method,
            solver=self.options.solver,
            verbose=self.options.verbose,
            start=start,
        )

    def backend_for(
        self, is_mip: bool, lp_method: LpMethod, wants: frozenset[Feature] = frozenset()
    ) -> Backend:
        method = self.settings(lp_method).lp_method
        return choose_backend(self.options.backend, is_mip, method, wants)

    def solve(
        self,
        model: Model,
        lp_method: LpMethod = LpMethod.AUTO,
        mip_gap: float | None = None,
        start: Start | None = None,
        relax: bool = False,
        time_limit: float | None = None,
        tuning: dict[str, dict[str, Scalar]] | None = None,
        on_incumbent: OnIncumbent | None = None,
        on_bound: OnBound | None = None,
    ) -> Solution:
        """Compile and solve one model. `lp_method` and `mip_gap` are the formulation's
        preferences, used when the user did not set them; `start` is a MILP starting point
        (column indices, values) for backends that take one; `relax` drops integrality (after
        export, so an exported model is the MILP itself); `time_limit` caps this model below
        what is left of the budget; `tuning` holds per-backend search settings that pay off on
        the formulation's models; `on_incumbent` watches a MILP's improving solutions and
        `on_bound` its dual bound where the backend can."""
        started = time.perf_counter()
        compiled = model.compile()
        self.build_seconds += time.perf_counter() - started
        if self.export_path is not None:
            return self._export(compiled)
        if relax:
            compiled = replace(compiled, integer=np.zeros_like(compiled.integer))
        settings = replace(
            self.settings(lp_method, mip_gap, start, time_limit),
            tuning=tuning or {},
            on_incumbent=on_incumbent,
            on_bound=on_bound,
        )
        backend = choose_backend(self.options.backend, compiled.is_mip, settings.lp_method)
        _check_mip(backend, settings.solver, compiled)
        return self.record(compiled, backend.solve(compiled, settings))

    def session(self, model: Model, lp_method: LpMethod) -> tuple[CompiledModel, Session] | None:
        """The compiled model kept by a backend that can re-solve it warm, or None when the
        chosen backend cannot (or the context only exports): the caller then solves cold."""
        if self.export_path is not None:
            return None
        backend = self.backend_for(False, lp_method, frozenset({Feature.SESSION}))
        if Feature.SESSION not in backend.features_for(self.options.solver):
            return None
        started = time.perf_counter()
        compiled = model.compile()
        self.build_seconds += time.perf_counter() - started
        return compiled, backend.session(compiled, self.settings(lp_method))

    def record(self, compiled: CompiledModel, solution: Solution) -> Solution:
        """Book a solve made outside `solve` (a warm re-solve of a session)."""
        if solution.backend not in self.backends_used:
            self.backends_used.append(solution.backend)
        self.build_seconds += solution.build_seconds
        self.solve_seconds += solution.solve_seconds
        self.solves += 1
        self.iterations += solution.iterations
        self.last = solution
        self.size = (
            compiled.num_cols,
            compiled.num_rows,
            int(compiled.matrix.nnz),
            int(compiled.integer.sum()),
        )
        return solution

    def _export(self, compiled: CompiledModel) -> Solution:
        writer = exporter()
        if self.exported is None:
            assert self.export_path is not None
            writer.export(compiled, self.export_path)
            self.exported = compiled
        return Solution(
            Status.ERROR,
            None,
            np.zeros(compiled.num_cols),
            backend=writer.name,
            solver="export",
            detail="exported, not solved",
        )


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


def describe(ctx: SolveContext) -> dict[str, Any]:
    """The context's books, for the solver report."""
    cols, rows, nnz, ints = ctx.size
    return {
        "backend": "+".join(ctx.backends_used) or ctx.options.backend,
        "solves": ctx.solves,
        "iterations": ctx.iterations,
        "variables": cols,
        "constraints": rows,
        "nonzeros": nnz,
        "integer_variables": ints,
        "build_seconds": ctx.build_seconds,
        "solve_seconds": ctx.solve_seconds,
    }
