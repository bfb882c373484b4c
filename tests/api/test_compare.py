"""POST /v1/compare through a real TestClient, and `explain` through POST /v1/solve: the
differences of a hand-solved what-if, and every bad field named in a 422."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app

client = TestClient(app)

# One v100 shared by a and b, c alone on k80 (FORMULATIONS §1 shares: a, b at 2, c at 4/3).
BEFORE = {
    "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}},
        {"id": "b", "throughput": {"v100": 1}},
        {"id": "c", "throughput": {"k80": 1}},
    ],
}


def _post(body: dict[str, Any]) -> Any:
    return client.post("/v1/compare", json=body)


def test_a_patch_adding_a_gpu_doubles_the_v100_jobs_time() -> None:
    response = _post({"before": BEFORE, "patch": {"gpus": {"v100": 1}}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["advisory"].startswith("advisory")
    jobs = {j["id"]: j for j in body["jobs"]}
    # A second v100: a and b run all of their time there (0.5 → 1 each).
    for held in ("a", "b"):
        assert jobs[held]["allocation_delta"] == {"v100": pytest.approx(0.5)}
        assert jobs[held]["throughput_delta"] == pytest.approx(0.5)
    # c keeps its k80 time; its share moves only with the normalizer (prop 3/4 → 3/5).
    assert jobs["c"]["allocation_delta"] == {}
    assert jobs["c"]["share_after"] == pytest.approx(5 / 3)
    sizes = [j["size"] for j in body["jobs"]]
    assert sizes == sorted(sizes, reverse=True)
    assert body["objective_before"] == pytest.approx(4 / 3)
    assert body["objective_delta"] == pytest.approx(body["objective_after"] - 4 / 3)


def test_two_snapshots_with_a_job_added_and_one_removed() -> None:
    after = {**BEFORE, "jobs": [*BEFORE["jobs"][1:], {"id": "d", "throughput": {"k80": 2}}]}
    response = _post({"before": BEFORE, "after": after, "policy": "max_min_fairness"})
    assert response.status_code == 200, response.text
    changes = {j["id"]: j["change"] for j in response.json()["jobs"]}
    assert changes["a"] == "removed" and changes["d"] == "added"


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"patch": {"gpus": {"v100": -2}}}, ["body", "patch", "gpus", "v100"]),
        ({"patch": {"weights": {"nobody": 2.0}}}, ["body", "patch", "weights", "nobody"]),
        ({"patch": {"gpus": {"v100": "1"}}}, ["body", "patch", "gpus", "v100"]),
        ({"after": {"gpu_types": [], "jobs": [{"id": 1}]}}, ["body", "after", "jobs", 0, "id"]),
        ({"patch": {}, "after": BEFORE}, ["body", "after"]),
        ({"patch": {}, "options": {"explain": "yes"}}, ["body", "options", "explain"]),
        ({"patch": {}, "surprise": 1}, ["body", "surprise"]),
    ],
)
def test_each_bad_input_gives_a_422_naming_its_field(
    change: dict[str, Any], loc: list[str | int]
) -> None:
    response = _post({"before": BEFORE, **change})
    assert response.status_code == 422, response.text
    assert loc in [e["loc"] for e in response.json()["errors"]]


def test_malformed_json_is_a_400() -> None:
    response = client.post(
        "/v1/compare", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400


def test_solve_with_explain_returns_the_explanation() -> None:
    response = client.post("/v1/solve", json={"snapshot": BEFORE, "options": {"explain": True}})
    assert response.status_code == 200, response.text
    explanation = response.json()["explanation"]
    assert explanation["available"]
    assert {j["id"]: j["code"] for j in explanation["jobs"]}["c"] == "full_time"
    plain = client.post("/v1/solve", json={"snapshot": BEFORE}).json()
    assert "explanation" not in plain
