"""Clarabel's interior point, called directly with sparse arrays (no modelling layer).

On the max-min fairness LP it beats HiGHS's interior point, which stalls on large three-type
models (the `backends` bench rows). An interior point is not a vertex: formulations repair
round-off and verify before reporting.

Conic form: minimize qᵀx s.t. A x + s = b, s ∈ K. Row bounds l ≤ a x ≤ u become a x + s = u and
−a x + s = −l with s ≥ 0 (one zero-cone row when l = u); column bounds likewise.
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from apportion.solver.backends import work
from apportion.solver.backends.base import (
    Backend,
    Feature,
    Solution,
    SolveSettings,
    reduced_costs,
)
from apportion.solver.backends.verify import settle
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import Termination

# Clarabel's status (by name: the extension is imported only when Clarabel solves) -> why it
# stopped; a name missing here reads as `unknown`. The point is checked (`verify.settle`).
TERMINATION: dict[str, Termination] = {
    "Solved": Termination.OPTIMAL,
    "AlmostSolved": Termination.INACCURATE,
    "PrimalInfeasible": Termination.INFEASIBLE,
    "AlmostPrimalInfeasible": Termination.INFEASIBLE,
    "DualInfeasible": Termination.UNBOUNDED,
    "AlmostDualInfeasible": Termination.UNBOUNDED,
    "MaxIterations": Termination.ITERATION_LIMIT,
    "MaxTime": Termination.TIME_LIMIT,
    "NumericalError": Termination.NUMERICAL,
    "InsufficientProgress": Termination.NUMERICAL,
    "CallbackTerminated": Termination.INTERRUPTED,
    "Unsolved": Termination.SOLVER_ERROR,
}


def conic_form(
    model: CompiledModel,
) -> tuple[sp.csc_matrix, np.ndarray, int, int, np.ndarray, np.ndarray]:
    """(A, b, equality rows, inequality rows, row-dual map, row-dual signs) of the conic form.

    Equality rows come first (zero cone), then ≤ rows (nonnegative cone). `dual_rows[i]` is the
    model row (or -1 for a column bound) behind conic row i, `dual_sign[i]` its orientation.
    """
    a = model.matrix.tocsr()
    lo, up = model.row_lower, model.row_upper
    eq = np.flatnonzero(np.isfinite(lo) & (lo == up))
    ub = np.flatnonzero(np.isfinite(up) & ~(lo == up))
    lb = np.flatnonzero(np.isfinite(lo) & ~(lo == up))
    n = model.num_cols
    eye = sp.identity(n, format="csr")
    cub = np.flatnonzero(np.isfinite(model.col_upper))
    clb = np.flatnonzero(np.isfinite(model.col_lower))
    blocks = [a[eq], a[ub], -a[lb], eye[cub], -eye[clb]]
    rhs = [up[eq], up[ub], -lo[lb], model.col_upper[cub], -model.col_lower[clb]]
    matrix = sp.vstack(blocks, format="csc")
    dual_rows = np.concatenate([eq, ub, lb, np.full(cub.size + clb.size, -1)])
    dual_sign = np.concatenate(
        [np.ones(eq.size), np.ones(ub.size), -np.ones(lb.size), np.zeros(cub.size + clb.size)]
    )
    return matrix, np.concatenate(rhs), eq.size, matrix.shape[0] - eq.size, dual_rows, dual_sign


class ClarabelBackend(Backend):
    name: ClassVar[str] = "clarabel"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.LP, Feature.DUALS})

    def available_solvers(self) -> list[str]:
        return ["clarabel"]

    def solve(self, model: CompiledModel, settings: SolveSettings) -> Solution:
        if model.is_mip:
            raise ValueError("Clarabel solves continuous models only")
        matrix, rhs, n_eq, n_ineq, dual_rows, dual_sign = conic_form(model)
        sign = -1.0 if model.sense is Sense.MAXIMIZE else 1.0
        import clarabel

        options = clarabel.DefaultSettings()
        options.verbose = settings.verbose
        if settings.time_limit is not None:
            options.time_limit = float(settings.time_limit)
        if settings.work_limit is not None:
            allowed = work.steps(settings.work_limit, work.IPM_ITERATION)
            options.max_iter = min(int(options.max_iter), allowed)
        if settings.threads is not None:
            options.max_threads = int(settings.threads)
        cones = []
        if n_eq:
            cones.append(clarabel.ZeroConeT(n_eq))
        if n_ineq:
            cones.append(clarabel.NonnegativeConeT(n_ineq))
        p = sp.csc_matrix((model.num_cols, model.num_cols))
        started = time.perf_counter()
        raw = clarabel.DefaultSolver(p, sign * model.cost, matrix, rhs, cones, options).solve()
        seconds = time.perf_counter() - started
        termination = TERMINATION.get(str(raw.status), Termination.UNKNOWN)
        x = np.asarray(raw.x, dtype=float)
        status, note = settle(termination, model, x if x.size == model.num_cols else None)
        duals = None
        if status.has_solution:
            z = np.asarray(raw.z, dtype=float)
            duals = np.zeros(model.num_rows)
            rows = dual_rows >= 0
            # HiGHS convention for a maximization: a binding ≤ row has a non-negative dual.
            np.add.at(duals, dual_rows[rows], -sign * dual_sign[rows] * z[rows])
        return Solution(
            status=status,
            objective=float(model.cost @ x + model.offset) if status.has_solution else None,
            x=x if x.size == model.num_cols else np.zeros(model.num_cols),
            backend=self.name,
            solver="clarabel",
            detail="; ".join(filter(None, [str(raw.status), note])),
            row_dual=duals,
            col_dual=reduced_costs(model, duals),
            iterations=int(raw.iterations),
            work=int(raw.iterations) * work.IPM_ITERATION,
            solve_seconds=seconds,
            termination=termination,
        )
