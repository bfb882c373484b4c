"""What a policy is, and the context a formulation solves its models in."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from solver.backends import LpMethod, Solution, SolveSettings, choose_backend
from solver.model import Model
from solver.options import PolicyOptions, SolveOptions
from solver.problem import ClusterArrays
from solver.snapshot import Snapshot
from solver.status import Status


@dataclass
class SolveContext:
    """Runs a formulation's models on the chosen backend and keeps the books on them."""

    options: SolveOptions
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    solves: int = 0
    iterations: int = 0
    last: Solution | None = None
    backends_used: list[str] = field(default_factory=list)
    size: tuple[int, int, int, int] = (0, 0, 0, 0)

    def settings(self, lp_method: LpMethod = LpMethod.AUTO) -> SolveSettings:
        method = (
            self.options.lp_method if self.options.lp_method is not LpMethod.AUTO else lp_method
        )
        return SolveSettings(
            time_limit=self.options.time_limit,
            mip_rel_gap=self.options.mip_gap,
            threads=self.options.threads,
            lp_method=method,
            solver=self.options.solver,
            verbose=self.options.verbose,
        )

    def solve(
        self,
        model: Model,
        lp_method: LpMethod = LpMethod.AUTO,
        start: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None,
        time_limit: float | None = None,
    ) -> Solution:
        """Compile and solve one model; `lp_method` is the formulation's measured preference,
        `start` a MILP starting point (column indices, values) for backends that take one,
        `time_limit` what is left of the user's limit for formulations that solve several."""
        started = time.perf_counter()
        compiled = model.compile()
        self.build_seconds += time.perf_counter() - started
        settings = replace(self.settings(lp_method), start=start)
        if time_limit is not None:
            settings = replace(settings, time_limit=time_limit)
        backend = choose_backend(self.options.backend, compiled.is_mip, settings.lp_method)
        solution = backend.solve(compiled, settings)
        if backend.name not in self.backends_used:
            self.backends_used.append(backend.name)
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


Runner = Callable[[Snapshot, ClusterArrays, Any, SolveContext], Outcome]


@dataclass(frozen=True)
class Policy:
    """A policy by name: what it optimizes, its options, and the function that solves it."""

    name: str
    summary: str
    options: type[PolicyOptions]
    run: Runner
    problem_class: str = "LP"  # LP, MILP, or "LP sequence" for iterative policies
    aliases: tuple[str, ...] = ()
