"""A claimed status is checked against the returned point (FORMULATIONS §8)."""

from __future__ import annotations

import numpy as np
import pulp
import pytest

from apportion.solver.backends import SolveSettings
from apportion.solver.backends.pulp_backend import PulpBackend
from apportion.solver.backends.verify import settle, violation
from apportion.solver.status import Status
from tests.conformance.models import lp_max_le, milp_knapsack


def test_violation_is_relative_to_the_bound_and_counts_integrality() -> None:
    model = lp_max_le()  # x + y ≤ 4, x + 3y ≤ 7, x ≤ 3
    assert violation(model, np.array([3.0, 1.0])) == 0.0
    # x + 3y = 7.7 breaks the bound 7 by 0.7, relative 0.1 (x + y = 3.7 holds).
    assert violation(model, np.array([1.7, 2.0])) == pytest.approx(0.1)
    assert violation(model, None) == float("inf")
    assert violation(model, np.array([np.nan, 0.0])) == float("inf")
    knapsack = milp_knapsack()
    assert violation(knapsack, np.array([1.0, 1.0, 0.0])) == 0.0
    assert violation(knapsack, np.array([1.0, 0.5, 0.0])) > 1e-3


@pytest.mark.parametrize(
    ("claimed", "point", "limit", "expected"),
    [
        (Status.OPTIMAL, [3.0, 1.0], False, Status.OPTIMAL),
        (Status.OPTIMAL, [3.0, 5.0], False, Status.ERROR),  # "optimal" on an infeasible point
        (Status.OPTIMAL, [3.0, 1.00001], False, Status.FEASIBLE),  # inexact: repairable
        (Status.FEASIBLE, [0.0, 0.0], True, Status.FEASIBLE),  # a verified incumbent
        (Status.FEASIBLE, [9.0, 9.0], True, Status.TIME_LIMIT),  # an "incumbent" that is not
        (Status.TIME_LIMIT, [1.0, 1.0], True, Status.FEASIBLE),
        (Status.TIME_LIMIT, None, True, Status.TIME_LIMIT),
        (Status.INFEASIBLE, None, False, Status.INFEASIBLE),
    ],
)
def test_settle(claimed: Status, point: list[float] | None, limit: bool, expected: Status) -> None:
    x = None if point is None else np.array(point)
    assert settle(claimed, lp_max_le(), x, limit_hit=limit)[0] is expected


def _fake_cbc(status: int, sol_status: int, value: float):  # type: ignore[no-untyped-def]
    def solve(self: pulp.LpProblem, solver: object = None) -> int:
        for v in self.variables():
            v.varValue = value
        self.status, self.sol_status = status, sol_status
        return status

    return solve


def test_pulp_timeout_reported_as_optimal_is_not_optimal(monkeypatch: pytest.MonkeyPatch) -> None:
    # What PuLP once said for a CBC time-out: "Optimal", every value 0. Here 0 is infeasible
    # (the model needs x + y ≥ 4), so there is no incumbent at all.
    from tests.conformance.models import lp_min_ge_eq

    fake = _fake_cbc(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible, 0.0)
    monkeypatch.setattr(pulp.LpProblem, "solve", fake)
    solution = PulpBackend().solve(lp_min_ge_eq(), SolveSettings(solver="CBC", time_limit=1.0))
    assert solution.status is Status.TIME_LIMIT
    assert solution.objective is None


def test_pulp_optimal_with_a_violating_point_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conformance.models import lp_min_ge_eq

    fake = _fake_cbc(pulp.LpStatusOptimal, pulp.LpSolutionOptimal, 0.0)
    monkeypatch.setattr(pulp.LpProblem, "solve", fake)
    solution = PulpBackend().solve(lp_min_ge_eq(), SolveSettings(solver="CBC"))
    assert solution.status is Status.ERROR
    assert "violates" in solution.detail
