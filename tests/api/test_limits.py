"""The service's rules on what a request may ask for, and one error shape for all of it."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app, create_app
from apportion.api.settings import CORES, Settings
from apportion.solver.registry import NAMES
from tests.conformance.cases_max_min import TWO_BY_TWO

client = TestClient(app)


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


@pytest.mark.parametrize("limit", ["inf", "1000", 1000, 1e9])
def test_time_limit_cap_applies_to_the_validated_value(limit: object) -> None:
    response = client.post(
        "/v1/solve", json={"snapshot": TWO_BY_TWO, "options": {"time_limit": limit}}
    )
    body = _problem(response, 422)
    assert ["body", "options", "time_limit"] in [e["loc"] for e in body["errors"]]


def test_a_time_limit_within_the_cap_is_kept() -> None:
    response = client.post("/v1/solve", json={"snapshot": TWO_BY_TWO, "options": {"time_limit": 5}})
    assert response.status_code == 200 and response.json()["status"] == "optimal"


def test_solver_threads_are_bounded_by_the_service() -> None:
    for threads in (100_000, CORES + 1):
        response = client.post(
            "/v1/solve", json={"snapshot": TWO_BY_TWO, "options": {"threads": threads}}
        )
        body = _problem(response, 422)
        assert ["body", "options", "threads"] in [e["loc"] for e in body["errors"]]
    # The service answers as before, whatever a client asked.
    ok = client.post("/v1/solve", json={"snapshot": TWO_BY_TWO, "options": {"threads": 1}})
    assert ok.status_code == 200 and ok.json()["status"] == "optimal"


def test_solver_logs_are_off_on_the_service() -> None:
    response = client.post("/v1/solve", json={"snapshot": TWO_BY_TWO, "options": {"verbose": True}})
    body = _problem(response, 422)
    assert body["errors"][0]["loc"] == ["body", "options", "verbose"]


def test_echoed_input_is_truncated() -> None:
    response = client.post("/v1/solve", json={"policy": "x" * 5_000_000, "snapshot": TWO_BY_TWO})
    body = _problem(response, 422)
    assert body["errors"][0]["loc"] == ["body", "policy"]
    assert len(response.content) < 2_000


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"\xff\xfe\x00garbage", b"[" * 100_000 + b"]" * 100_000, b""],
    ids=["syntax", "not utf-8", "100k deep", "empty"],
)
def test_a_malformed_body_is_a_400_naming_the_body(raw: bytes) -> None:
    response = client.post("/v1/solve", content=raw, headers={"content-type": "application/json"})
    body = _problem(response, 400)
    assert body["errors"][0]["loc"] == ["body"]


@pytest.mark.parametrize(
    "payload",
    [[1, 2], {"snapshot": TWO_BY_TWO, "extra": 1}, {"policy": 3, "snapshot": TWO_BY_TWO}],
    ids=["not an object", "unknown key", "policy not a string"],
)
def test_a_body_of_the_wrong_shape_is_a_422(payload: object) -> None:
    body = _problem(client.post("/v1/solve", json=payload), 422)
    assert body["errors"] and all(e["loc"][0] == "body" for e in body["errors"])


def test_a_body_over_the_size_limit_is_a_413() -> None:
    small = TestClient(create_app(Settings(max_body_bytes=2048)))
    declared = small.post(
        "/v1/solve",
        content=b"{}",
        headers={"content-type": "application/json", "content-length": "2000000000"},
    )
    _problem(declared, 413)

    def chunks() -> Any:
        yield b"x" * 1500
        yield b"x" * 1500

    streamed = small.post(
        "/v1/solve", content=chunks(), headers={"content-type": "application/json"}
    )
    _problem(streamed, 413)


def test_metrics_answer_at_their_path_with_the_queue_gauges() -> None:
    client.post("/v1/solve", json={"snapshot": TWO_BY_TWO})
    response = client.get("/metrics", follow_redirects=False)
    assert response.status_code == 200
    text = response.text
    assert "apportion_queue_depth" in text and "apportion_in_flight" in text
    assert 'apportion_solves_total{policy="max_min_fairness",status="optimal"}' in text


def test_docs_are_served_without_the_internet() -> None:
    page = client.get("/docs")
    assert page.status_code == 200
    assert "/static/swagger-ui/swagger-ui-bundle.js" in page.text
    assert "cdn" not in page.text.lower()
    script = client.get("/static/swagger-ui/swagger-ui-bundle.js")
    assert script.status_code == 200 and len(script.content) > 100_000


def test_the_request_schema_says_which_options_each_policy_takes() -> None:
    spec = client.get("/openapi.json").json()
    body = spec["paths"]["/v1/solve"]["post"]["requestBody"]["content"]["application/json"]
    variants = [ref["$ref"].rsplit("/", 1)[1] for ref in body["schema"]["oneOf"]]
    schemas = spec["components"]["schemas"]
    deadline = schemas["DeadlineAdmissionRequest"]
    assert deadline["properties"]["policy"]["enum"] == [
        "deadline_admission",
        "chronus",
        "deadlines",
    ]
    options = schemas[deadline["properties"]["options"]["anyOf"][0]["$ref"].rsplit("/", 1)[1]]
    assert {"sigma", "time_limit", "backend"} <= set(options["properties"])
    assert options.get("additionalProperties") is False
    assert len(variants) == len(NAMES) + 1  # every policy and the snapshot's own
    assert "SiaRequest" in variants
    gittins = schemas["TiresiasGittinsRequest"]
    assert "2d_gittins" in gittins["properties"]["policy"]["enum"]
    responses = spec["paths"]["/v1/solve"]["post"]["responses"]
    assert {"200", "400", "413", "422", "503"} <= set(responses)
    assert "application/problem+json" in responses["503"]["content"]


def test_large_bodies_travel_through_spool_files_and_leave_none_behind() -> None:
    from apportion.api.body import SPOOL_BYTES
    from apportion.refdata.synthetic import gavel_snapshot

    snapshot = gavel_snapshot(30_000, seed=1)
    response = client.post("/v1/solve", json={"policy": "max_min_fairness", "snapshot": snapshot})
    assert response.status_code == 200
    assert len(response.content) > SPOOL_BYTES  # the answer came back from a file too
    body = response.json()
    assert body["status"] == "optimal" and len(body["jobs"]) == 30_000
    folder = app.state.pool.spool.dir  # the service's folder in the spool
    assert folder.is_dir() and [p for p in folder.rglob("*") if p.is_file()] == []
