"""What the cvxpy and PuLP backends declare matches what they do."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from apportion.solver.backends import Feature, SolveSettings, capable_of, get_backend
from apportion.solver.backends.cvxpy_backend import mip_capable, to_cvxpy
from apportion.solver.model import Model, Sense
from apportion.solver.status import Status
from tests.conformance.models import milp_mixed


def test_cvxpy_features_follow_the_sub_solver() -> None:
    backend = get_backend("cvxpy")
    solvers = backend.available_solvers()
    assert solvers[0] == "CLARABEL"  # the LP default
    for solver in solvers:
        assert (Feature.MILP in backend.features_for(solver)) == mip_capable(solver)
    assert Feature.MILP not in backend.features_for("SCS")
    assert Feature.MILP in backend.features_for("HIGHS")
    assert backend.resolve_solver("clarabel") == "CLARABEL"  # names are case-insensitive


def test_pulp_offers_cbc_and_highs_with_milp() -> None:
    backend = get_backend("pulp")
    assert backend.available_solvers()[:2] == ["CBC", "HiGHS"]
    assert all(Feature.MILP in backend.features_for(s) for s in backend.available_solvers())


@pytest.mark.parametrize("backend", ["highs", "clarabel", "cvxpy", "pulp"])
def test_unknown_sub_solver_names_the_available_ones(backend: str) -> None:
    b = get_backend(backend)
    with pytest.raises(ValueError, match="available: ") as info:
        b.resolve_solver("no-such-solver")
    assert all(s in str(info.value) for s in b.available_solvers())


def test_milp_alternatives_list_only_capable_pairs() -> None:
    able = capable_of(Feature.MILP)
    assert "highs" in able and "pulp" in able
    assert "clarabel" not in able
    cvxpy_entry = next(a for a in able if a.startswith("cvxpy"))
    assert "SCS" not in cvxpy_entry and "CLARABEL" not in cvxpy_entry


def test_cvxpy_gets_one_variable_per_integrality_run_and_matrix_constraints() -> None:
    # c (continuous) | a, b (integer) | d (continuous): three variables, not four scalars.
    problem, parts, rows = to_cvxpy(milp_mixed())
    assert [p.size for p in parts] == [1, 2, 1]
    assert [bool(p.attributes["integer"]) for p in parts] == [False, True, False]
    assert len(problem.constraints) == len(rows) == 1


def test_pulp_column_in_no_row_keeps_its_bounds() -> None:
    # y appears in no row and not in the objective, so PuLP never passes it to the solver; the
    # value reported must still lie within y's bounds [2, 5] (the one nearest 0: 2).
    m = Model("orphan")
    x = m.add_variables("x", 1, upper=3.0)
    m.add_variables("y", 1, lower=2.0, upper=5.0)
    m.add_constraints("row", {x: np.ones((1, 1))}, upper=2.0)
    m.set_objective({x: 1.0}, Sense.MAXIMIZE)
    model = m.compile()
    for solver in get_backend("pulp").available_solvers():
        solution = get_backend("pulp").solve(model, SolveSettings(solver=solver))
        assert solution.status is Status.OPTIMAL
        assert solution.x.tolist() == pytest.approx([2.0, 2.0])


@pytest.mark.parametrize("backend", ["cvxpy", "pulp"])
def test_build_and_solve_times_are_booked_apart(backend: str) -> None:
    from tests.conformance.models import lp_max_le

    solution = get_backend(backend).solve(lp_max_le(), SolveSettings())
    assert solution.build_seconds > 0 and solution.solve_seconds > 0
    assert solution.solver == get_backend(backend).available_solvers()[0]


@pytest.mark.parametrize("backend", ["cvxpy", "pulp"])
def test_models_without_columns(backend: str) -> None:
    # No variables, one empty row: 0 within [-1, 5] holds (optimal: the offset 2.5); a row
    # needing 0 ≥ 1 cannot hold.
    m = Model("empty")
    m.set_objective({}, Sense.MINIMIZE, offset=2.5)
    base = m.compile()
    for lower, expected in [(-1.0, Status.OPTIMAL), (1.0, Status.INFEASIBLE)]:
        model = dataclasses.replace(
            base,
            matrix=sp.csc_matrix((1, 0)),
            row_lower=np.array([lower]),
            row_upper=np.array([5.0]),
        )
        solution = get_backend(backend).solve(model, SolveSettings())
        assert solution.status is expected
        assert solution.objective == (2.5 if expected is Status.OPTIMAL else None)
