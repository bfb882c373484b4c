"""options.backend / options.solver over HTTP: 200 with the report, 422 naming the field."""

from __future__ import annotations

from fastapi.testclient import TestClient

from apportion.api.main import app
from tests.conformance.cases_max_min import TWO_BY_TWO

client = TestClient(app)


def test_solve_with_cvxpy_and_a_sub_solver() -> None:
    body = {"snapshot": TWO_BY_TWO, "options": {"backend": "cvxpy", "solver": "highs"}}
    response = client.post("/v1/solve", json=body)
    assert response.status_code == 200, response.text
    report = response.json()["solver"]
    assert (report["backend"], report["solver"]) == ("cvxpy", "HIGHS")
    assert report["build_seconds"] > 0


def test_unknown_sub_solver_is_a_422_on_options_solver() -> None:
    body = {"snapshot": TWO_BY_TWO, "options": {"backend": "cvxpy", "solver": "mosekk"}}
    response = client.post("/v1/solve", json=body)
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["loc"] == ["body", "options", "solver"]
    assert "CLARABEL" in error["msg"]


def test_policies_lists_each_backends_solvers() -> None:
    solvers = client.get("/v1/policies").json()["solvers"]
    assert solvers["pulp"][:2] == ["CBC", "HiGHS"]
    assert solvers["cvxpy"][0] == "CLARABEL"
    assert "auto" not in solvers
