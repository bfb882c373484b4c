"""Every backend that reports duals reports reduced costs in the same convention as its row
duals (∂objective/∂ the column's active bound), checked by moving the bound and re-solving."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.model import Model, Sense

BACKENDS = ["highs", "clarabel", "cvxpy", "pulp"]


def knapsack_lp(upper_y: float = 4.0, sense: Sense = Sense.MAXIMIZE) -> Model:
    """max x + 2y s.t. x + y ≤ 5, 0 ≤ x ≤ 4, 0 ≤ y ≤ upper_y: y sits at its bound (reduced cost
    2 − 1 = 1 per unit of it), x is basic (0)."""
    model = Model("lp")
    v = model.add_variables("v", 2, upper=[4.0, upper_y])
    model.add_constraints("sum", {v: np.ones((1, 2))}, upper=5.0)
    model.set_objective({v: [1.0, 2.0]}, sense)
    return model


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduced_costs_are_the_bound_derivatives(backend: str) -> None:
    solver = get_backend(backend)
    base = solver.solve(knapsack_lp().compile(), SolveSettings())
    assert base.col_dual is not None and base.row_dual is not None
    assert base.col_dual == pytest.approx([0.0, 1.0], abs=1e-6)
    moved = solver.solve(knapsack_lp(upper_y=4.5).compile(), SolveSettings())
    assert base.objective is not None and moved.objective is not None
    assert (moved.objective - base.objective) / 0.5 == pytest.approx(base.col_dual[1], rel=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduced_costs_are_cost_minus_priced_rows(backend: str) -> None:
    compiled = knapsack_lp(sense=Sense.MINIMIZE).compile()
    solution = get_backend(backend).solve(compiled, SolveSettings())
    assert solution.row_dual is not None and solution.col_dual is not None
    expected = compiled.cost - compiled.matrix.T @ solution.row_dual
    assert solution.col_dual == pytest.approx(expected, abs=1e-6)
