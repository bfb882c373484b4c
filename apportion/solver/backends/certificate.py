"""An optimality certificate for an LP answer, computed from the model alone.

Whatever a solver believed when it stopped, an answer (x, row duals y) is checked here on the
compiled model:

- primal: the largest violation of a row or bound, relative to max(1, |bound|)
  (`verify.violation`);
- dual: y made exactly feasible in sign (a ≥ row's dual of a minimization is ≥ 0, a ≤ row's
  ≤ 0, a free row's 0), and the Lagrangian bound it proves,

      L(y) = Σ_i (y_i lo_i if y_i > 0 else y_i up_i) + Σ_j min_{lo_j ≤ x_j ≤ u_j} (c − Aᵀy)_j x_j,

  a bound on the optimum for every y (weak duality), finite when each column whose reduced
  cost has the wrong sign has a finite upper bound u_j: its own, or one a row implies (a ≤ row
  with non-negative coefficients over columns bounded below, such as a job's time row);
- the relative gap between the point's objective and that bound (`status.relative_gap`).

So a certificate never rests on a solver's own tolerances: dual infeasibility shows up as a
weaker bound, and the gap measures what is left.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from apportion.solver.backends.verify import violation
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import relative_gap

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Certificate:
    primal_violation: float
    objective: float  # cᵀx + offset at the point
    bound: float  # the dual bound on the optimum, in the model's sense
    relative_gap: float

    def proves(self, gap: float, feasibility: float) -> bool:
        return self.relative_gap <= gap and self.primal_violation <= feasibility


def certify(model: CompiledModel, x: FloatArray, row_dual: FloatArray) -> Certificate:
    """The certificate of (x, row_dual) on `model` (duals in the backends' convention: a
    binding ≤ row of a maximization has a non-negative dual)."""
    maximize = model.sense is Sense.MAXIMIZE
    sign = -1.0 if maximize else 1.0
    objective = float(model.cost @ x + model.offset)
    bound_min = _lagrangian(model, sign * np.asarray(row_dual, float), sign * model.cost)
    bound = model.offset + (-bound_min if maximize else bound_min)
    gap = relative_gap(bound, objective, maximize) if np.isfinite(bound) else float("inf")
    return Certificate(violation(model, x), objective, bound, gap)


def _lagrangian(model: CompiledModel, y: FloatArray, cost: FloatArray) -> float:
    """L(y) of the minimization of cost·x (see the module docstring), or of L(α y) when a
    column unbounded above has a reduced cost short of 0 only by rounding: at an optimum the
    level t's cost is met by Σ_g w_g μ_g = 1, which rounding leaves 1 − 1e-16 short, and
    scaling the duals by α = c_j / (a_jᵀ y) restores it (every bound L(α y) is valid)."""
    lo, up = model.row_lower, model.row_upper
    y = np.where(np.isfinite(lo), y, np.minimum(y, 0.0))
    y = np.where(np.isfinite(up), y, np.maximum(y, 0.0))
    value = _bound_at(model, y, cost)
    if np.isfinite(value):
        return value
    priced = model.matrix.T @ y
    stuck = (cost - priced < 0) & ~np.isfinite(model.col_upper)
    if not stuck.any() or not ((cost[stuck] < 0) & (priced[stuck] < 0)).all():
        return value
    alpha = float((cost[stuck] / priced[stuck]).max())
    return _bound_at(model, alpha * y, cost)


def _bound_at(model: CompiledModel, y: FloatArray, cost: FloatArray) -> float:
    lo, up = model.row_lower, model.row_upper
    rows = float(np.where(y > 0, y * np.where(np.isfinite(lo), lo, 0.0), 0.0).sum())
    rows += float(np.where(y < 0, y * np.where(np.isfinite(up), up, 0.0), 0.0).sum())
    d = cost - model.matrix.T @ y
    low, high = model.col_lower, model.col_upper.copy()
    wrong = (d < 0) & ~np.isfinite(high)
    if wrong.any():
        high[wrong] = _implied_upper(model, np.flatnonzero(wrong))
    rising, falling = d > 0, d < 0
    if not (np.isfinite(low[rising]).all() and np.isfinite(high[falling]).all()):
        return float("-inf")
    cols = float((d[rising] * low[rising]).sum() + (d[falling] * high[falling]).sum())
    return rows + cols


def _implied_upper(model: CompiledModel, cols: NDArray[np.int64]) -> FloatArray:
    """Upper bounds of `cols` implied by ≤ rows with non-negative coefficients over columns
    with finite lower bounds: x_j ≤ lo_j + (up_i − Σ_k a_ik lo_k) / a_ij (+∞ where none)."""
    a = model.matrix.tocsr()
    lower = np.where(np.isfinite(model.col_lower), model.col_lower, 0.0)
    row_min = np.minimum.reduceat(a.data, a.indptr[:-1]) if a.nnz else np.zeros(0)
    empty = np.diff(a.indptr) == 0
    row_min = np.where(empty, 0.0, row_min) if row_min.size else np.zeros(model.num_rows)
    bounded_below = np.ones(model.num_rows, bool)
    unbounded_cols = ~np.isfinite(model.col_lower)
    if unbounded_cols.any():
        bounded_below = (abs(a) @ unbounded_cols.astype(float)) == 0
    usable = np.isfinite(model.row_upper) & (row_min >= 0) & bounded_below
    room = np.where(usable, model.row_upper - a @ lower, np.nan)
    sub = model.matrix[:, cols].tocsc()
    out = np.full(cols.size, np.inf)
    for_entries = np.repeat(np.arange(cols.size), np.diff(sub.indptr))
    ok = usable[sub.indices] & (sub.data > 0)
    cand = lower[cols][for_entries[ok]] + room[sub.indices[ok]] / sub.data[ok]
    np.minimum.at(out, for_entries[ok], cand)
    return out
