"""POST /v1/estimate through the app: a named job's row read back from the bundled table,
the document sent back with observations, every bad field named in a 422, and the route typed
in the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from apportion.refdata.synthetic import load_gavel_table

client = TestClient(app)
LM = "LM (batch size 20)"


def _post(body: dict[str, Any]) -> Any:
    return client.post("/v1/estimate", json=body)


def test_a_named_job_is_its_table_row_and_learns_from_progress() -> None:
    table = load_gavel_table().throughput((LM, 1))
    first = _post({"jobs": [{"id": "j", "job_type": LM}]})
    assert first.status_code == 200, first.text
    cells = first.json()["jobs"]["j"]["throughput"]
    assert {g: c["mean"] for g, c in cells.items()} == pytest.approx(table)
    seen = {"job": "j", "gpu_type": "v100", "steps": 360 * 50.0, "seconds": 360.0}
    later = _post({"estimate": first.json(), "observations": [seen]})
    assert later.status_code == 200, later.text
    v100 = later.json()["jobs"]["j"]["throughput"]["v100"]
    assert v100["mean"] == pytest.approx(50.0, rel=0.01)
    assert v100["sigma"] < cells["v100"]["sigma"]
    assert v100["low"] <= 50.0 <= v100["high"]


def test_every_bad_field_is_named() -> None:
    body = {
        "jobs": [{"id": "j", "job_type": "LM (batch size 21)", "profiles": {"v100": "fast"}}],
        "options": {"level": 1.5},
    }
    response = _post(body)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    locs = [e["loc"] for e in response.json()["errors"]]
    assert ["body", "jobs", 0, "profiles", "v100"] in locs
    assert ["body", "options", "level"] in locs
    unknown = _post({"jobs": [{"id": "j", "job_type": "LM (batch size 21)"}]})
    assert unknown.status_code == 422
    error = unknown.json()["errors"][0]
    assert error["loc"] == ["body", "jobs", 0, "job_type"] and "did you mean" in error["msg"]
    assert _post({"observations": [{"job": "x"}], "extra": 1}).status_code == 422


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        (
            {
                "gpu_types": ["v100"],
                "job_types": [{"model": "a", "scale_factor": 1, "throughput": [1]}],
            },
            "throughput: {gpu_type",
        ),
        ({"gpu_types": ["v100"]}, "no 'job_types' field"),
        (
            {"gpu_types": ["v100"], "job_types": [{"model": "a", "throughput": {}}]},
            "no 'scale_factor' field",
        ),
    ],
)
def test_a_malformed_reference_table_is_a_422_naming_it(reference: Any, says: str) -> None:
    response = _post({"reference": reference, "jobs": [{"id": "j"}]})
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["loc"][-1] == "reference" and says in error["msg"]


def test_the_route_is_typed_in_the_openapi_document() -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/v1/estimate"]["post"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/EstimateInput"}
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/EstimateDocument"}
