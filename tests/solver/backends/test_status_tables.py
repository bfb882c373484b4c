"""Every backend's own status codes, row by row: why the solver stopped (`Termination`) is
kept as the backend said it, and a code a table lacks reads as `unknown`, never as a guess."""

from __future__ import annotations

import highspy
import numpy as np
import pulp
import pytest
from cvxpy import settings as cs

from apportion.solver.backends import highs, pulp_backend
from apportion.solver.backends.clarabel_direct import TERMINATION as CLARABEL
from apportion.solver.backends.cvxpy_backend import TERMINATION as CVXPY
from apportion.solver.backends.verify import Point, classify
from apportion.solver.status import IMPLIED, Status, Termination, relative_gap

T = Termination
MS = highspy.HighsModelStatus

HIGHS_ROWS = [
    (MS.kOptimal, T.OPTIMAL),
    (MS.kModelEmpty, T.OPTIMAL),
    (MS.kInfeasible, T.INFEASIBLE),
    (MS.kUnboundedOrInfeasible, T.INFEASIBLE_OR_UNBOUNDED),
    (MS.kUnbounded, T.UNBOUNDED),
    (MS.kTimeLimit, T.TIME_LIMIT),
    (MS.kIterationLimit, T.ITERATION_LIMIT),
    (MS.kSolutionLimit, T.SOLUTION_LIMIT),
    (MS.kObjectiveBound, T.OBJECTIVE_LIMIT),
    (MS.kObjectiveTarget, T.OBJECTIVE_LIMIT),
    (MS.kInterrupt, T.INTERRUPTED),
    (MS.kHighsInterrupt, T.INTERRUPTED),
    (MS.kUnknown, T.UNKNOWN),
    (MS.kNotset, T.SOLVER_ERROR),
    (MS.kLoadError, T.SOLVER_ERROR),
    (MS.kModelError, T.SOLVER_ERROR),
    (MS.kPresolveError, T.SOLVER_ERROR),
    (MS.kSolveError, T.SOLVER_ERROR),
    (MS.kPostsolveError, T.SOLVER_ERROR),
    (MS.kMemoryLimit, T.SOLVER_ERROR),
]


@pytest.mark.parametrize(("code", "expected"), HIGHS_ROWS, ids=lambda v: str(v))
def test_highs_row(code: object, expected: Termination) -> None:
    assert highs.TERMINATION[code] is expected


def test_every_highs_code_has_a_row() -> None:
    """Lossless: each model status this HiGHS defines is in the table (a new one would read as
    `unknown` until it gets a row)."""
    codes = {getattr(MS, name) for name in dir(MS) if name.startswith("k")}
    assert codes == set(highs.TERMINATION) == {code for code, _ in HIGHS_ROWS}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Solved", T.OPTIMAL),
        ("AlmostSolved", T.INACCURATE),
        ("PrimalInfeasible", T.INFEASIBLE),
        ("AlmostPrimalInfeasible", T.INFEASIBLE),
        ("DualInfeasible", T.UNBOUNDED),
        ("AlmostDualInfeasible", T.UNBOUNDED),
        ("MaxIterations", T.ITERATION_LIMIT),
        ("MaxTime", T.TIME_LIMIT),
        ("NumericalError", T.NUMERICAL),
        ("InsufficientProgress", T.NUMERICAL),
        ("CallbackTerminated", T.INTERRUPTED),
        ("Unsolved", T.SOLVER_ERROR),
    ],
)
def test_clarabel_row(name: str, expected: Termination) -> None:
    assert CLARABEL[name] is expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (cs.OPTIMAL, T.OPTIMAL),
        (cs.OPTIMAL_INACCURATE, T.INACCURATE),
        (cs.INFEASIBLE, T.INFEASIBLE),
        (cs.INFEASIBLE_INACCURATE, T.INFEASIBLE),
        (cs.UNBOUNDED, T.UNBOUNDED),
        (cs.UNBOUNDED_INACCURATE, T.UNBOUNDED),
        (cs.INFEASIBLE_OR_UNBOUNDED, T.INFEASIBLE_OR_UNBOUNDED),
        (cs.USER_LIMIT, T.USER_LIMIT),
        (cs.SOLVER_ERROR, T.SOLVER_ERROR),
    ],
)
def test_cvxpy_row(code: str, expected: Termination) -> None:
    assert CVXPY[code] is expected


def test_every_cvxpy_status_has_a_row() -> None:
    assert {*cs.SOLUTION_PRESENT, *cs.INF_OR_UNB, *cs.ERROR} == set(CVXPY)


C = pulp.constants


@pytest.mark.parametrize(
    ("raw", "limited", "failed", "expected"),
    [
        ((C.LpStatusOptimal, C.LpSolutionOptimal), True, False, T.OPTIMAL),
        # What PuLP says when a limit stopped CBC with an incumbent.
        ((C.LpStatusOptimal, C.LpSolutionIntegerFeasible), True, False, T.USER_LIMIT),
        ((C.LpStatusNotSolved, C.LpSolutionNoSolutionFound), True, False, T.USER_LIMIT),
        # "Not solved" with no limit set is the solver failing, not a limit.
        ((C.LpStatusNotSolved, C.LpSolutionNoSolutionFound), False, False, T.SOLVER_ERROR),
        ((C.LpStatusInfeasible, C.LpSolutionInfeasible), True, False, T.INFEASIBLE),
        ((C.LpStatusInfeasible, C.LpSolutionNoSolutionFound), True, False, T.INFEASIBLE),
        ((C.LpStatusUnbounded, C.LpSolutionUnbounded), True, False, T.UNBOUNDED),
        ((C.LpStatusUnbounded, C.LpSolutionNoSolutionFound), True, False, T.UNBOUNDED),
        ((C.LpStatusUndefined, C.LpSolutionNoSolutionFound), True, False, T.UNKNOWN),
        # A pair no table row has: an unproven "Optimal" is not trusted.
        ((C.LpStatusOptimal, C.LpSolutionNoSolutionFound), True, False, T.UNKNOWN),
        ((C.LpStatusOptimal, C.LpSolutionOptimal), True, True, T.SOLVER_ERROR),
    ],
)
def test_pulp_row(raw: tuple[int, int], limited: bool, failed: bool, expected: Termination) -> None:
    assert pulp_backend.termination_of(raw, limited, failed) is expected


def test_unknown_codes_read_as_unknown() -> None:
    assert highs.TERMINATION.get("a code from a newer HiGHS", T.UNKNOWN) is T.UNKNOWN
    assert CVXPY.get("a new cvxpy status", T.UNKNOWN) is T.UNKNOWN
    assert CLARABEL.get("NewStatus", T.UNKNOWN) is T.UNKNOWN
    assert pulp_backend.termination_of((7, 7), True, False) is T.UNKNOWN


@pytest.mark.parametrize("termination", list(Termination))
def test_every_termination_has_a_class_for_every_point(termination: Termination) -> None:
    """`classify` is total: every (termination, point) pair gets a class, and only a feasible
    (or nearly feasible, for converged solves) point ever gives an allocation."""
    for point in Point:
        status, _ = classify(termination, point)
        assert isinstance(status, Status)
        if status.has_solution:
            assert point in (Point.FEASIBLE, Point.NEARLY)
        if status is Status.OPTIMAL:
            assert termination is T.OPTIMAL and point is Point.FEASIBLE


def test_an_unknown_stop_after_milliseconds_is_not_a_time_limit() -> None:
    """HiGHS's "Unknown" (an interior point without crossover, say) is reported as such, not
    folded into a time limit."""
    assert highs.TERMINATION[MS.kUnknown] is T.UNKNOWN
    assert classify(T.UNKNOWN, Point.NONE)[0] is Status.NO_SOLUTION
    assert not T.UNKNOWN.is_limit and T.TIME_LIMIT.is_limit


def test_every_status_implies_a_termination() -> None:
    assert set(IMPLIED) == set(Status)


@pytest.mark.parametrize(
    ("bound", "value", "maximize", "expected"),
    [
        (110.0, 100.0, True, 0.1),
        (90.0, 100.0, False, 0.1),
        (-90.0, -100.0, True, 0.1),  # the value's magnitude is the denominator
        (100.0, 100.0, True, 0.0),
        (99.9999, 100.0, True, 0.0),  # past its bound by rounding: no gap
        (0.0, 0.0, True, 0.0),
        (1.0, 0.0, True, np.inf),  # HiGHS's "Large"
        (180.0, 305.0, False, 125.0 / 305.0),  # HiGHS's log: 40.98 %,
    ],
)
def test_the_one_gap(bound: float, value: float, maximize: bool, expected: float) -> None:
    assert relative_gap(bound, value, maximize) == pytest.approx(expected)
