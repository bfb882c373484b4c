"""The new policies over HTTP: listed with their options, solved, bad entities rejected."""

from __future__ import annotations

from fastapi.testclient import TestClient

from apportion.api.main import app
from tests.formulations.fairness.test_hierarchical import FAIRNESS

client = TestClient(app)


def test_policies_lists_the_fairness_family_with_options() -> None:
    listed = {p["name"]: p for p in client.get("/v1/policies").json()["policies"]}
    for name in ("water_filling", "hierarchical", "max_min_fairness"):
        options = listed[name]["options"]["properties"]
        assert {"space_sharing", "prune_pairs", "heterogeneity_aware"} <= options.keys()
    assert listed["water_filling"]["problem_class"] == "LP sequence"


def test_solve_hierarchical_over_http() -> None:
    response = client.post("/v1/solve", json={"policy": "hierarchical", "snapshot": FAIRNESS})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "optimal"
    assert [e["id"] for e in body["summary"]["entities"]] == ["A", "B"]
    assert body["jobs"][2]["metrics"]["effective_weight"] == 3.0


def test_unknown_entity_is_a_422_with_its_location() -> None:
    bad = {**FAIRNESS, "jobs": [*FAIRNESS["jobs"], {"id": "x", "entity": "C"}]}
    response = client.post("/v1/solve", json={"policy": "hierarchical", "snapshot": bad})
    assert response.status_code == 422
    (detail,) = response.json()["errors"]
    assert detail["loc"] == ["body", "snapshot", "jobs", 3, "entity"]
    assert "unknown entity 'C'" in detail["msg"]


def test_robust_max_min_over_http_states_its_guarantee() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}, {"name": "k80", "count": 2}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 2.0, "k80": 1.0}},
            {"id": "b", "throughput": {"v100": 1.0, "k80": 1.0}},
        ],
    }
    body = {"policy": "robust_max_min", "snapshot": snapshot, "options": {"uncertainty": 0.3}}
    response = client.post("/v1/solve", json=body)
    assert response.status_code == 200
    answer = response.json()
    assert "every throughput" in answer["summary"]["guarantee"]
    assert all("guaranteed_share" in job["metrics"] for job in answer["jobs"])
    bad = {**snapshot, "jobs": [{**snapshot["jobs"][0], "throughput_uncertainty": {"k80": 2}}]}
    response = client.post("/v1/solve", json={**body, "snapshot": bad})
    assert response.status_code == 422
    (detail,) = response.json()["errors"]
    assert detail["loc"] == ["body", "snapshot", "jobs", 0, "throughput_uncertainty", "k80"]
