"""POST /v1/rounds through a real TestClient: rounds from an allocation or a policy, and every
bad field named in a 422."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app

client = TestClient(app)

ROUND = 360.0
NODES = [
    {"id": "v", "gpus": 1, "gpu_type": "v100"},
    {"id": "p", "gpus": 1, "gpu_type": "p100"},
    {"id": "k", "gpus": 1, "gpu_type": "k80"},
]
SNAPSHOT = {
    "nodes": NODES,
    "jobs": [
        {"id": f"job{i}", "throughput": {"v100": 3.0, "p100": 2.0, "k80": 1.0}} for i in range(3)
    ],
}
NO_NODES = {
    "gpu_types": [{"name": k, "count": 1} for k in ("v100", "p100", "k80")],
    "jobs": SNAPSHOT["jobs"],
}
# The talk's example: allocation X and the rounds each job received per type.
ALLOCATION = {
    "job0": {"v100": 0.6, "p100": 0.4},
    "job1": {"v100": 0.2, "p100": 0.6, "k80": 0.2},
    "job2": {"v100": 0.2, "k80": 0.8},
}
RECEIVED = {
    "job0": {"v100": 3 * ROUND, "p100": ROUND},
    "job1": {"v100": ROUND, "p100": 3 * ROUND},
    "job2": {"k80": 4 * ROUND},
}


def _post(body: dict[str, Any]) -> Any:
    return client.post("/v1/rounds", json=body)


def test_the_round_for_an_allocation() -> None:
    previous = {"job0": {"v": 1}, "job1": {"p": 1}, "job2": {"k": 1}}
    response = _post(
        {"snapshot": SNAPSHOT, "allocation": ALLOCATION, "received": RECEIVED, "previous": previous}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["assignments"] == {
        "job1": {
            "gpu_type": "k80",
            "placement": {"k": 1},
            "kept": False,
            "priority": None,  # +∞: never ran on a K80
            "shared_with": None,
        },
        "job2": {
            "gpu_type": "v100",
            "placement": {"v": 1},
            "kept": False,
            "priority": None,
            "shared_with": None,
        },
        "job0": {
            "gpu_type": "p100",
            "placement": {"p": 1},
            "kept": False,
            "priority": pytest.approx(1.6),
            "shared_with": None,
        },
    }
    assert body["idle"] == {"v100": 0, "p100": 0, "k80": 0}
    assert body["waiting"] == [] and body["reasons"] == {}
    assert body["allocation"] == ALLOCATION and body["elapsed"] == 4 * ROUND
    assert body["policy"] is None and body["status"] is None


def test_the_round_for_a_policy_with_a_lease_kept_and_a_job_waiting() -> None:
    snapshot = {
        "nodes": [{"id": "n0", "gpus": 2, "gpu_type": "g"}],
        "jobs": [
            {"id": "a", "scale_factor": 2, "throughput": {"g": 1.0}},
            {"id": "b", "scale_factor": 2, "throughput": {"g": 1.0}},
        ],
    }
    body = {
        "snapshot": snapshot,
        "policy": "max_min_fairness",
        "options": {"time_limit": 5},
        "received": {"a": {"g": ROUND}, "b": {"g": 0.0}},
        "previous": {"a": {"n0": 2}},
    }
    response = _post(body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["policy"] == "max_min_fairness" and answer["status"] == "optimal"
    assert answer["allocation"] == {"a": {"g": pytest.approx(0.5)}, "b": {"g": pytest.approx(0.5)}}
    assert list(answer["assignments"]) == ["b"]  # a had its round: b has +∞ priority
    assert answer["waiting"] == ["a"] and "higher-priority" in answer["reasons"]["a"]
    body["received"] = {"a": {"g": ROUND}, "b": {"g": ROUND}}
    again = _post(body).json()
    assert again["assignments"]["a"]["kept"] is True  # a is served first, on its GPUs


def test_bad_fields_are_named_from_the_body_root() -> None:
    response = _post(
        {
            "snapshot": SNAPSHOT,
            "allocation": {"nobody": {"v100": 0.5}, "job0": {"a100": 0.5}},
            "received": {"job1": {"v100": 1.0}, "ghost": {"k80": 1.0}},
            "previous": {"job0": {"v": 2}, "job1": {"x": 1}},
        }
    )
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    locs = {tuple(e["loc"]) for e in response.json()["errors"]}
    assert locs == {
        ("body", "allocation", "nobody"),
        ("body", "allocation", "job0", "a100"),
        ("body", "received", "ghost"),
        ("body", "previous", "job0", "v"),
        ("body", "previous", "job1", "x"),
    }


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"allocation": {"job0": {"v100": 1.5}}}, ["body", "allocation", "job0", "v100"]),
        ({"received": {"job0": {"v100": -1.0}}}, ["body", "received", "job0", "v100"]),
        ({"previous": {"job0": {"v": 0}}}, ["body", "previous", "job0", "v"]),
        ({"allocation": None}, ["body", "allocation"]),
        ({"policy": "max_min_fairness"}, ["body", "policy"]),
        ({"pairs": [{"a": "job0", "b": "job1"}]}, ["body", "pairs", 0, "allocation"]),
        ({"snapshot": NO_NODES}, ["body", "snapshot", "nodes"]),
        ({"surprise": 1}, ["body", "surprise"]),
    ],
)
def test_each_bad_input_gives_a_422_naming_its_field(
    change: dict[str, Any], loc: list[str | int]
) -> None:
    body = {"snapshot": SNAPSHOT, "allocation": ALLOCATION, "received": RECEIVED, **change}
    response = _post({k: v for k, v in body.items() if v is not None})
    assert response.status_code == 422, response.text
    assert loc in [e["loc"] for e in response.json()["errors"]]


def test_malformed_json_is_a_400() -> None:
    response = client.post(
        "/v1/rounds", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400


def test_the_openapi_document_types_the_rounds_body() -> None:
    spec = client.get("/openapi.json").json()
    post = spec["paths"]["/v1/rounds"]["post"]
    schema = post["requestBody"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/RoundsRequest"}
    request = spec["components"]["schemas"]["RoundsRequest"]
    assert {"snapshot", "allocation", "policy", "received", "previous", "pairs", "estimate"} <= set(
        request["properties"]
    )
    assert "max_min_fairness" in str(request["properties"]["policy"])
    assert post["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/EstimatedRound"
    }
    # The round's fields, and the updated estimate when the request gave one.
    answer = spec["components"]["schemas"]["EstimatedRound"]["properties"]
    assert {"assignments", "idle", "waiting", "allocation", "estimate"} <= set(answer)
    assert "application/problem+json" in post["responses"]["422"]["content"]


def test_gavels_per_type_queues_on_request() -> None:
    # a is behind on both types, most on the K80 (priorities T·X/g: a 6 on the K80 and 3 on
    # the V100, b 1.5 on the V100 and 0.75 on the K80). One queue: a on the K80, b on the
    # V100; a queue per type, the V100's first: a on the V100, b on the K80.
    speeds = {"v100": 2.0, "k80": 1.0}
    body = {
        "snapshot": {
            "nodes": [NODES[0], NODES[2]],
            "jobs": [{"id": j, "throughput": speeds} for j in "ab"],
        },
        "allocation": {j: {"v100": 0.5, "k80": 0.5} for j in "ab"},
        "received": {"a": {"v100": 360.0, "k80": 180.0}, "b": {"v100": 720.0, "k80": 1440.0}},
        "elapsed": 2160.0,
    }
    one = _post(body).json()["assignments"]
    assert {j: a["gpu_type"] for j, a in one.items()} == {"a": "k80", "b": "v100"}
    per_type = _post({**body, "order": "types"}).json()["assignments"]
    assert {j: a["gpu_type"] for j, a in per_type.items()} == {"a": "v100", "b": "k80"}
    wrong = _post({**body, "order": "fastest"})
    assert wrong.status_code == 422
    assert wrong.json()["errors"][0]["loc"] == ["body", "order"]
