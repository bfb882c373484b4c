"""Trust no status blindly: a backend's claim is checked against the point it returned.

Modelling layers relay whatever their solver said, and solvers have been caught out: PuLP
reported a CBC time-out as "Optimal" with objective 0, and an interior point without crossover
returned a point 8 % off with status "Unknown". So every claim with a point is re-checked here
against the compiled model before it is passed on.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
from numpy.typing import NDArray

from apportion.solver.model import CompiledModel
from apportion.solver.status import Status, Termination

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


class Point(Enum):
    """What the solver's returned point is worth, checked against the model."""

    FEASIBLE = "feasible"
    NEARLY = "nearly"  # within LOOSE_TOLERANCE: an inexact answer a formulation may repair
    INFEASIBLE = "infeasible"  # a point, but not a feasible one
    NONE = "none"


def point_quality(model: CompiledModel, x: NDArray[np.float64] | None) -> tuple[Point, float]:
    """The point's class and its largest scaled violation."""
    v = violation(model, x)
    if v <= FEASIBILITY_TOLERANCE:
        return Point.FEASIBLE, v
    if v == float("inf"):
        return Point.NONE, v
    return (Point.NEARLY if v <= LOOSE_TOLERANCE else Point.INFEASIBLE), v


#: Terminations whose verdict needs no point: the class follows from the termination alone.
_VERDICTS: dict[Termination, Status] = {
    Termination.INFEASIBLE: Status.INFEASIBLE,
    Termination.UNBOUNDED: Status.UNBOUNDED,
    Termination.INFEASIBLE_OR_UNBOUNDED: Status.NO_SOLUTION,
    Termination.SOLVER_ERROR: Status.ERROR,
    Termination.NUMERICAL: Status.ERROR,
}


def classify(termination: Termination, point: Point, violation: float = 0.0) -> tuple[Status, str]:
    """The answer's class from why the solver stopped and what its point is worth, with a note
    when the point overrules the solver's claim. One rule for every backend:

    - a verdict (infeasible, unbounded, either, an error) stands as it is;
    - "optimal" needs a feasible point; a nearly feasible one makes the answer `feasible`
      (inexact), anything worse an `error`;
    - "inaccurate" is `feasible` with a point at most nearly feasible, else an `error`;
    - a limit, an interrupt or an unknown stop is `feasible` with a feasible point (an
      incumbent), else `no_solution`.
    """
    verdict = _VERDICTS.get(termination)
    if verdict is not None:
        return verdict, ""
    off = f"its point violates the model by {violation:.1e}"
    if termination in (Termination.OPTIMAL, Termination.INACCURATE):
        if point is Point.FEASIBLE:
            exact = termination is Termination.OPTIMAL
            return (Status.OPTIMAL if exact else Status.FEASIBLE), ""
        if point is Point.NEARLY:
            return Status.FEASIBLE, f"inexact: {off}"
        if point is Point.NONE:
            return Status.ERROR, f"claimed {termination.value} without a point"
        return Status.ERROR, f"claimed {termination.value} but {off}"
    if point is Point.FEASIBLE:
        return Status.FEASIBLE, ""
    return Status.NO_SOLUTION, "" if point is Point.NONE else "its point is not feasible"


def settle(
    termination: Termination, model: CompiledModel, x: NDArray[np.float64] | None
) -> tuple[Status, str]:
    """The status a caller may trust for a backend that relays another layer's claim: the
    claim is checked against the compiled model (`classify`)."""
    point, v = point_quality(model, x)
    return classify(termination, point, v)


def empty_model_status(model: CompiledModel) -> Status:
    """A model without variables is optimal when its rows admit 0, infeasible otherwise (its
    termination is the one the status implies)."""
    ok = np.all(model.row_lower <= 0.0) and np.all(model.row_upper >= 0.0)
    return Status.OPTIMAL if ok else Status.INFEASIBLE
