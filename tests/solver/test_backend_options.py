"""options.backend / options.solver: validated against what each backend and sub-solver can do,
with errors that name the field and the alternatives; the report says what ran."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.fairness.max_min import MaxMinFairnessOptions
from apportion.solver import InputError, Status, solve
from apportion.solver.backends import Feature
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Model, Sense
from apportion.solver.options import SolveOptions
from apportion.solver.policy import Policy
from apportion.solver.request import check_backend
from tests.conformance.cases_max_min import TWO_BY_TWO
from tests.conformance.combos import backend_solvers, pair_id


def _milp_policy() -> Policy:
    return Policy(
        "some_milp",
        "a MILP policy",
        MaxMinFairnessOptions,
        lambda *a: None,
        "MILP",
        needs=frozenset({Feature.MILP}),
    )


def _error(excinfo: pytest.ExceptionInfo[InputError]) -> tuple[tuple[str | int, ...], str]:
    (error,) = excinfo.value.errors
    return error.loc, error.msg


def test_milp_policy_on_a_conic_solver_names_the_alternatives() -> None:
    with pytest.raises(InputError) as info:
        check_backend(_milp_policy(), SolveOptions(backend="cvxpy", solver="SCS"))
    loc, msg = _error(info)
    assert loc == ("options", "solver")
    assert "cvxpy with solver SCS cannot solve MILP models (some_milp)" in msg
    assert "highs" in msg and "pulp" in msg and "cvxpy with solver HIGHS" in msg


def test_milp_policy_on_an_lp_only_backend() -> None:
    with pytest.raises(InputError) as info:
        check_backend(_milp_policy(), SolveOptions(backend="clarabel"))
    loc, msg = _error(info)
    assert loc == ("options", "backend")
    assert msg.startswith("backend clarabel cannot solve MILP models") and "auto" in msg


def test_milp_capable_pairs_pass_and_the_solver_is_spelled_canonically() -> None:
    checked = check_backend(_milp_policy(), SolveOptions(backend="pulp", solver="cbc"))
    assert checked.solver == "CBC"
    assert check_backend(_milp_policy(), SolveOptions(backend="cvxpy")).solver is None


def test_a_milp_reaching_an_lp_only_solver_at_run_time_is_an_input_error() -> None:
    # A policy whose class says LP but builds a MILP is still caught before solving.
    m = Model("sneaky")
    v = m.add_variables("v", 1, integer=True, upper=3.0)
    m.set_objective({v: 1.0}, Sense.MAXIMIZE)
    ctx = SolveContext(SolveOptions(backend="cvxpy", solver="CLARABEL"))
    with pytest.raises(InputError, match="cannot solve MILP models"):
        ctx.solve(SolveRequest(m))


@pytest.mark.parametrize(
    ("options", "loc", "words"),
    [
        ({"backend": "cvxpy", "solver": "GLPKX"}, ("options", "solver"), ["CLARABEL", "SCS"]),
        ({"backend": "pulp", "solver": "gurobi-x"}, ("options", "solver"), ["CBC", "HiGHS"]),
        ({"solver": "ipm"}, ("options", "solver"), ["needs a backend", "pulp (CBC, HiGHS)"]),
        ({"backend": "nope"}, ("options", "backend"), ["cvxpy", "pulp"]),
    ],
)
def test_bad_backend_or_solver_is_a_field_error(
    options: dict[str, str], loc: tuple[str, ...], words: list[str]
) -> None:
    with pytest.raises(InputError) as info:
        solve(TWO_BY_TWO, options=options)
    got_loc, msg = _error(info)
    assert got_loc == loc
    assert all(w in msg for w in words), msg


@pytest.mark.parametrize(
    ("backend", "solver"), [("cvxpy", "scs"), ("cvxpy", None), ("pulp", "highs"), ("pulp", None)]
)
def test_report_names_backend_and_solver_with_times(backend: str, solver: str | None) -> None:
    options = {"backend": backend} | ({"solver": solver} if solver else {})
    result = solve(TWO_BY_TWO, options=options)
    assert result.status is Status.OPTIMAL
    report = result.solver
    assert report.backend == backend
    assert report.solver == {"scs": "SCS", "highs": "HiGHS", None: report.solver}[solver]
    assert report.solver in {"SCS", "HiGHS", "CLARABEL", "CBC"}
    assert report.build_seconds > 0 and report.solve_seconds > 0
    assert report.total_seconds >= report.build_seconds + report.solve_seconds
    assert np.isclose(result.objective, 1.0)


@pytest.mark.parametrize("pair", backend_solvers(Feature.LP), ids=pair_id)
def test_settings_are_accepted_by_every_sub_solver(pair: tuple[str, str | None]) -> None:
    # Not a timing test: each sub-solver must take the limits and the interior-point hint in
    # its own keywords (a wrong keyword is a solver error, which would show in the status).
    backend, solver = pair
    options = {
        "backend": backend,
        "time_limit": 5,
        "mip_gap": 0.01,
        "threads": 1,
        "lp_method": "ipm",
    }
    result = solve(TWO_BY_TWO, options=options | ({"solver": solver} if solver else {}))
    assert result.status in {Status.OPTIMAL, Status.FEASIBLE}, result.solver.detail
    assert result.objective == pytest.approx(1.0, rel=1e-6)
