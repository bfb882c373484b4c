"""An optimality certificate for an LP answer, computed from the model alone.

Whatever a solver believed when it stopped, an answer (x, row duals y) is checked here on the
compiled model:

- primal: the largest violation of a row or bound, relative to max(1, |bound|)
  (`verify.violation`);
- dual: y made exactly feasible in sign (a ≥ row's dual of a minimization is ≥ 0, a ≤ row's
  ≤ 0, a free row's 0), and the Lagrangian bound it proves,

      L(y) = Σ_i (y_i lo_i if y_i > 0 else y_i up_i) + Σ_j min_{lo_j ≤ x_j ≤ u_j} (c − Aᵀy)_j x_j,

  a bound on the optimum for every y (weak duality) wherever each column whose reduced cost
  has the wrong sign has a finite upper bound u_j: its own, or one a row implies (a ≤ row with
  non-negative coefficients over columns bounded below, such as a job's time row: a job's
  slightly wrong price on a type then only weakens the bound). A column with no such bound (a
  level t, z_e) must have its reduced cost right: how far it is off, relative, is the dual
  violation;
- the relative gap between the point's objective and that bound (`status.relative_gap`).

So a certificate never rests on a solver's own tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends.verify import violation
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import relative_gap

#: Objective and bound both within this of 0, relative to the largest cost, prove an optimum
#: of 0 (the relative gap has no meaning there: any rounding above 0 would read as infinite).
ZERO = 1e-12


@dataclass(frozen=True)
class Certificate:
    primal_violation: float
    dual_violation: float
    objective: float  # cᵀx + offset at the point
    bound: float  # the dual bound on the optimum, in the model's sense
    relative_gap: float

    def proves(self, tolerance: float) -> bool:
        """Primal and dual feasibility and the relative gap, each within `tolerance`."""
        worst = max(self.relative_gap, self.primal_violation, self.dual_violation)
        return worst <= tolerance


def certify(model: CompiledModel, x: FloatArray, row_dual: FloatArray) -> Certificate:
    """The certificate of (x, row_dual) on `model` (duals in the backends' convention: a
    binding ≤ row of a maximization has a non-negative dual)."""
    maximize = model.sense is Sense.MAXIMIZE
    sign = -1.0 if maximize else 1.0
    objective = float(model.cost @ x + model.offset)
    bound_min, dual_violation = _lagrangian(
        model, sign * np.asarray(row_dual, float), sign * model.cost
    )
    bound = model.offset + (-bound_min if maximize else bound_min)
    gap = relative_gap(bound, objective, maximize) if np.isfinite(bound) else float("inf")
    zero = ZERO * float(np.abs(model.cost).max(initial=0.0))
    if np.isfinite(bound) and max(abs(bound), abs(objective)) <= zero:
        gap = 0.0  # an optimum of 0 (nobody can rise) proved to rounding: no ratio to take
    return Certificate(violation(model, x), dual_violation, objective, bound, gap)


def _lagrangian(model: CompiledModel, y: FloatArray, cost: FloatArray) -> tuple[float, float]:
    """(L(y) of the minimization of cost·x, the dual violation): see the module docstring. A
    column with no finite upper bound, its own or implied, whose reduced cost has the wrong
    sign makes y infeasible by |d_j| relative to the larger of |c_j| + |a_j|ᵀ|y| and the
    largest cost; it is counted as 0 in the
    bound and reported as the violation."""
    lo, up = model.row_lower, model.row_upper
    y = np.where(np.isfinite(lo), y, np.minimum(y, 0.0))
    y = np.where(np.isfinite(up), y, np.maximum(y, 0.0))
    d = cost - model.matrix.T @ y
    high = model.col_upper.copy()
    wrong = (d < 0) & ~np.isfinite(high)
    if wrong.any():
        high[wrong] = _implied_upper(model, np.flatnonzero(wrong))
    dual_violation = 0.0
    stuck = (d < 0) & ~np.isfinite(high)
    if stuck.any():
        size = np.abs(cost[stuck]) + abs(model.matrix[:, stuck]).T @ np.abs(y)
        size = np.maximum(size, float(np.abs(cost).max(initial=0.0)))
        dual_violation = float((-d[stuck] / np.maximum(size, 1e-300)).max())
        d = np.where(stuck, 0.0, d)
    rows = float(np.where(y > 0, y * np.where(np.isfinite(lo), lo, 0.0), 0.0).sum())
    rows += float(np.where(y < 0, y * np.where(np.isfinite(up), up, 0.0), 0.0).sum())
    low = model.col_lower
    rising, falling = d > 0, d < 0
    if not np.isfinite(low[rising]).all():
        return float("-inf"), float("inf")
    cols = float((d[rising] * low[rising]).sum() + (d[falling] * high[falling]).sum())
    return rows + cols, dual_violation


def _implied_upper(model: CompiledModel, cols: NDArray[np.int64]) -> FloatArray:
    """Upper bounds of `cols` implied by ≤ rows with non-negative coefficients over columns
    with finite lower bounds: x_j ≤ lo_j + (up_i − Σ_k a_ik lo_k) / a_ij (+∞ where none)."""
    a = model.matrix.tocsr()
    lower = np.where(np.isfinite(model.col_lower), model.col_lower, 0.0)
    empty = np.diff(a.indptr) == 0
    row_min = np.zeros(model.num_rows)
    if a.nnz:  # reduceat reads one entry for an empty row: those are set apart
        starts = np.minimum(a.indptr[:-1], a.nnz - 1)
        row_min = np.where(empty, 0.0, np.minimum.reduceat(a.data, starts))
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
