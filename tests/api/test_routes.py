"""The HTTP API through a real TestClient: solve, validation errors, policies, health."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.cases_max_min import TWO_BY_TWO

client = TestClient(app)


def test_solve_returns_the_result_document(gavel_physical: dict[str, Any]) -> None:
    response = client.post(
        "/v1/solve", json={"policy": "max_min_fairness", "snapshot": gavel_physical}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "optimal" and body["policy"] == "max_min_fairness"
    assert body["solver"]["backend"] and body["solver"]["total_seconds"] > 0
    assert len(body["jobs"]) == len(gavel_physical["jobs"])


def test_solve_hand_solved_case_matches_python() -> None:
    body = client.post("/v1/solve", json={"snapshot": TWO_BY_TWO}).json()
    assert body["objective"] == pytest.approx(1.0)
    from apportion.solver import SolveResult

    assert_feasible_allocation(SolveResult.model_validate(body), TWO_BY_TWO)


def test_every_bad_field_is_named_in_a_422() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [
            {"id": "a", "scale_factor": 0},
            {"id": "b", "throughput": {"v100": -1}},
        ],
    }
    response = client.post("/v1/solve", json={"snapshot": snapshot})
    assert response.status_code == 422
    locs = {tuple(e["loc"]) for e in response.json()["errors"]}
    assert locs == {
        ("body", "snapshot", "jobs", 0, "scale_factor"),
        ("body", "snapshot", "jobs", 1, "throughput", "v100"),
    }


def test_cross_field_errors_have_exact_locations() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [{"id": "a"}, {"id": "a", "throughput": {"a100": 1}}],
    }
    detail = client.post("/v1/solve", json={"snapshot": snapshot}).json()["errors"]
    assert {(tuple(e["loc"]), e["msg"]) for e in detail} == {
        (("body", "snapshot", "jobs", 1, "id"), "duplicate job id 'a'"),
        (("body", "snapshot", "jobs", 1, "throughput", "a100"), "unknown GPU type 'a100'"),
    }


@pytest.mark.parametrize(
    ("payload", "loc"),
    [
        ({"policy": "nope", "snapshot": TWO_BY_TWO}, ["body", "policy"]),
        ({"snapshot": TWO_BY_TWO, "options": {"bogus": 1}}, ["body", "options", "bogus"]),
        ({"snapshot": TWO_BY_TWO, "options": {"backend": "nope"}}, ["body", "options", "backend"]),
        (
            {"snapshot": TWO_BY_TWO, "options": {"time_limit": -1}},
            ["body", "options", "time_limit"],
        ),
        (
            {"snapshot": TWO_BY_TWO, "options": {"time_limit": 10_000}},
            ["body", "options", "time_limit"],
        ),
    ],
)
def test_bad_policy_or_options_are_422(payload: dict[str, Any], loc: list[str]) -> None:
    response = client.post("/v1/solve", json=payload)
    assert response.status_code == 422
    assert loc in [e["loc"] for e in response.json()["errors"]]


def test_malformed_body_is_a_400_problem_not_500() -> None:
    response = client.post(
        "/v1/solve", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["errors"][0]["loc"] == ["body"]


def test_policies_lists_options() -> None:
    body = client.get("/v1/policies").json()
    names = {p["name"]: p for p in body["policies"]}
    assert "heterogeneity_aware" in names["max_min_fairness"]["options"]["properties"]
    assert "time_limit" in body["common_options"]["properties"]
    assert "highs" in body["backends"]


def test_health_and_docs() -> None:
    assert client.get("/livez").json() == {"status": "ok"}
    assert client.get("/readyz").json()["status"] == "ok"
    assert client.get("/docs").status_code == 200
    assert "/v1/solve" in client.get("/openapi.json").json()["paths"]
    client.post("/v1/solve", json={"snapshot": TWO_BY_TWO})
    assert (
        'apportion_solves_total{policy="max_min_fairness",status="optimal"}'
        in client.get("/metrics").text
    )
