"""What a policy is, and the context a formulation solves its models in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from solver.arrays import ClusterArrays
from solver.backends import (
    Backend,
    Feature,
    LpMethod,
    OnBound,
    OnIncumbent,
    Solution,
    SolveSettings,
    capable_of,
    choose_backend,
)
from solver.backends.highs import HighsBackend
from solver.errors import InputError
from solver.model import CompiledModel, Model
from solver.options import PolicyOptions, SolveOptions
from solver.snapshot import Snapshot
from solver.status import Status


class ModelExported(Exception):
    """Raised by a build-only `SolveContext` once the first model is written: the policy's run
    stops there, since later models of an iterative policy depend on solutions."""

    def __init__(self, model: CompiledModel, path: str) -> None:
        super().__init__(f"model written to {path}")
        self.model = model
        self.path = path


@dataclass
class SolveContext:
    """Runs a formulation's models on the chosen backend and keeps the books on them.

    With `export_path` set it is build-only: the first model a policy asks to solve is written
    there (.lp or .mps) instead, and `ModelExported` ends the run. Every policy gets model
    export this way without code of its own.
    """

    options: SolveOptions
    export_path: str | None = None
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    solves: int = 0
    iterations: int = 0
    last: Solution | None = None
    backends_used: list[str] = field(default_factory=list)
    size: tuple[int, int, int, int] = (0, 0, 0, 0)

    def settings(
        self,
        lp_method: LpMethod = LpMethod.AUTO,
        mip_gap: float | None = None,
        start: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None,
    ) -> SolveSettings:
        """The user's options, falling back to the formulation's preferences where unset."""
        method = (
            self.options.lp_method if self.options.lp_method is not LpMethod.AUTO else lp_method
        )
        return SolveSettings(
            time_limit=self.options.time_limit,
            mip_rel_gap=self.options.mip_gap if self.options.mip_gap is not None else mip_gap,
            threads=self.options.threads,
            lp_method=method,
            solver=self.options.solver,
            verbose=self.options.verbose,
            start=start,
        )

    def solve(
        self,
        model: Model,
        lp_method: LpMethod = LpMethod.AUTO,
        mip_gap: float | None = None,
        start: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None,
        relax: bool = False,
        time_limit: float | None = None,
        highs_options: dict[str, bool | int | float | str] | None = None,
        on_incumbent: OnIncumbent | None = None,
        on_bound: OnBound | None = None,
    ) -> Solution:
        """Compile and solve one model. `lp_method` and `mip_gap` are the formulation's
        preferences, used when the user did not set them; `start` is a MILP starting point
        (column indices, values) for backends that take one; `relax` drops integrality (after
        export, so an exported model is the MILP itself); `time_limit` is what is left of the
        user's limit for formulations that solve several models; `highs_options` are HiGHS
        search settings that pay off on the formulation's models (other backends ignore them);
        `on_incumbent` watches a MILP's improving solutions and `on_bound` its dual bound where
        the backend can."""
        started = time.perf_counter()
        compiled = model.compile()
        self.build_seconds += time.perf_counter() - started
        if self.export_path is not None:
            HighsBackend().export(compiled, self.export_path)
            raise ModelExported(compiled, self.export_path)
        if relax:
            compiled = replace(compiled, integer=np.zeros_like(compiled.integer))
        settings = self.settings(lp_method, mip_gap, start)
        if time_limit is not None:
            settings = replace(settings, time_limit=time_limit)
        if highs_options:
            settings = replace(settings, highs_options=highs_options)
        if on_incumbent is not None or on_bound is not None:
            settings = replace(settings, on_incumbent=on_incumbent, on_bound=on_bound)
        backend = choose_backend(self.options.backend, compiled.is_mip, settings.lp_method)
        _check_mip(backend, settings.solver, compiled)
        return self.record(compiled, backend.solve(compiled, settings))

    def record(self, compiled: CompiledModel, solution: Solution) -> Solution:
        """Book a solve made outside `solve` (e.g. a warm re-solve kept by a formulation)."""
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


@dataclass
class Outcome:
    """A formulation's answer in array form, before it is turned into a result document.

    `allocation` is X (jobs × GPU types, original job order); metrics are per-job arrays.
    """

    status: Status
    objective: float | None
    objective_name: str
    allocation: NDArray[np.float64]
    reasons: dict[int, str] = field(default_factory=dict)
    job_metrics: dict[str, NDArray[Any]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    normalized_share: NDArray[np.float64] | None = None
    placements: dict[int, dict[str, int]] = field(default_factory=dict)  # job → node → GPUs
    merged_groups: int | None = None
    # Set by policies whose throughput or GPU use is not T·X and s·X (space sharing).
    effective_throughput: NDArray[np.float64] | None = None
    gpu_used: NDArray[np.float64] | None = None


Runner = Callable[[Snapshot, ClusterArrays, Any, SolveContext], Outcome]


@dataclass(frozen=True)
class Policy:
    """A policy by name: what it optimizes, its options, and the function that solves it."""

    name: str
    summary: str
    options: type[PolicyOptions]
    run: Runner
    problem_class: str = "LP"  # LP, MILP, or "LP sequence" for iterative policies
