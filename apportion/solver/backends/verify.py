"""Trust no status blindly: a backend's claim is checked against the point it returned.

Modelling layers relay whatever their solver said, and solvers have been caught out: PuLP
reported a CBC time-out as "Optimal" with objective 0, and an interior point without crossover
returned a point 8 % off with status "Unknown". So every claim with a point is re-checked here
against the compiled model before it is passed on.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from apportion.solver.model import CompiledModel
from apportion.solver.status import Status

#: Largest violation of a row or bound, relative to max(1, |bound|), that counts as feasible.
FEASIBILITY_TOLERANCE = 1e-6
#: Up to this, a point is "nearly" feasible: an inexact solve the formulation may repair.
LOOSE_TOLERANCE = 1e-3
#: Distance from the nearest integer an integer column may have (MILP solvers' default).
INTEGRALITY_TOLERANCE = 1e-5


def violation(model: CompiledModel, x: NDArray[np.float64] | None) -> float:
    """Largest scaled violation of rows, bounds and integrality; inf when there is no point."""
    if x is None or x.size != model.num_cols or not np.all(np.isfinite(x)):
        return float("inf")
    ax = model.matrix @ x
    worst = 0.0
    for excess, bound in (
        (model.col_lower - x, model.col_lower),
        (x - model.col_upper, model.col_upper),
        (model.row_lower - ax, model.row_lower),
        (ax - model.row_upper, model.row_upper),
    ):
        finite = np.isfinite(bound)
        if finite.any():
            scaled = excess[finite] / np.maximum(1.0, np.abs(bound[finite]))
            worst = max(worst, float(scaled.max()))
    if model.is_mip:
        ints = x[model.integer]
        off = float(np.abs(ints - np.round(ints)).max())
        # Scaled so that the integrality tolerance maps onto the feasibility tolerance.
        worst = max(worst, off * FEASIBILITY_TOLERANCE / INTEGRALITY_TOLERANCE)
    return worst


def settle(
    claimed: Status, model: CompiledModel, x: NDArray[np.float64] | None, limit_hit: bool
) -> tuple[Status, str]:
    """The status a caller may trust, and a note when it differs from the claim.

    `claimed` comes from a backend's status table: OPTIMAL, FEASIBLE (a point the solver does not
    call optimal: an incumbent or an inexact optimum), TIME_LIMIT, or a status without a point.
    `limit_hit` says whether a limit (time, iterations) stopped the solver.
    """
    if claimed not in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT):
        return claimed, ""
    v = violation(model, x)
    if v <= FEASIBILITY_TOLERANCE:
        return (Status.OPTIMAL if claimed is Status.OPTIMAL else Status.FEASIBLE), ""
    if claimed is Status.TIME_LIMIT or (limit_hit and claimed is Status.FEASIBLE):
        return Status.TIME_LIMIT, "" if v == float("inf") else "its point is not feasible"
    if v <= LOOSE_TOLERANCE:
        return Status.FEASIBLE, f"inexact: its point violates the model by {v:.1e}"
    return Status.ERROR, f"claimed {claimed.value} but its point violates the model by {v:.1e}"


def empty_model_status(model: CompiledModel) -> Status:
    """A model without variables is optimal when its rows admit 0, infeasible otherwise."""
    ok = np.all(model.row_lower <= 0.0) and np.all(model.row_upper >= 0.0)
    return Status.OPTIMAL if ok else Status.INFEASIBLE
