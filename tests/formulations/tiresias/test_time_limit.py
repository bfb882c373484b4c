"""At its time limit a large placement problem is answered with the schedule it has (the best
found, or the greedy one), every rule kept, its status saying it is not proven: 128 nodes of 8
GPUs 80 % held by running jobs, and 1,500 jobs in all."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from apportion import solve
from apportion.api.main import app
from apportion.refdata.tiresias import PHILLY_GANGS, busy_cluster, model_names, tensor_sizes
from tests.formulations.tiresias.valid import check_schedule


def large(seed: int = 0, jobs: int = 1500) -> dict[str, Any]:
    """Running jobs from `busy_cluster`, given queues and starts; waiting jobs of Philly's
    gang sizes and Tiresias's models up to `jobs`."""
    snapshot = busy_cluster(seed=seed, shape=(128, 8), fill=0.8, new_job=(4, "vgg16"))
    rng = np.random.default_rng(seed)
    listed: list[dict[str, Any]] = snapshot["jobs"]
    for job in listed:
        job["attained_service"] = float(rng.choice([100.0, 5000.0, 20000.0]))
        job["started_at"] = float(rng.integers(0, 1000))
    gangs = np.array(list(PHILLY_GANGS))
    weights = np.array(list(PHILLY_GANGS.values()), dtype=float)
    names = model_names()
    while len(listed) < jobs:
        model = names[int(rng.integers(len(names)))]
        listed.append(
            {
                "id": f"w{len(listed)}",
                "scale_factor": int(rng.choice(gangs, p=weights / weights.sum())),
                "throughput": {"gpu": 1.0},
                "arrival_time": float(rng.integers(0, 2000)),
                "attained_service": float(rng.choice([0.0, 0.0, 4000.0, 9000.0])),
                "tensor_sizes": list(tensor_sizes(model) or ()),
            }
        )
    snapshot["service_distribution"] = {"samples": [100.0, 1000.0, 5000.0, 20000.0, 90000.0]}
    return snapshot


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return large()


PROVEN_OR_CUT = {("optimal", "optimal"), ("feasible", "time_limit"), ("fallback", "time_limit")}


@pytest.mark.parametrize(
    ("policy", "options"),
    [
        ("tiresias_las", {}),
        ("tiresias_las", {"placement": "network_load"}),
        ("tiresias_gittins", {"quantum": "sup"}),
        ("network_load_placement", {}),
    ],
)
def test_the_answer_at_the_limit_is_a_whole_schedule(
    snapshot: dict[str, Any], policy: str, options: dict[str, Any]
) -> None:
    # A millisecond is gone before the first model is built, so every search is cut short; a
    # machine fast enough to prove it anyway must say `optimal` (no timing is asserted).
    result = solve(snapshot, policy=policy, options={**options, "time_limit": 0.001})
    assert (result.status.value, result.termination.value) in PROVEN_OR_CUT
    runs = check_schedule(snapshot, result, consolidate=policy != "network_load_placement")
    assert sum(runs) > 0
    if policy != "network_load_placement":
        assert result.summary["running"] == sum(runs)


def test_greedy_admission_says_it_is_a_heuristic(snapshot: dict[str, Any]) -> None:
    result = solve(snapshot, policy="tiresias_las", options={"admission": "greedy"})
    assert result.status.value == "feasible"
    assert result.termination.value == "not_solved"
    assert any("greedy" in w for w in result.warnings)
    assert "heuristic" in result.solver.detail
    check_schedule(snapshot, result)


def test_the_service_answers_at_the_limit(snapshot: dict[str, Any]) -> None:
    body = {"policy": "tiresias_las", "snapshot": snapshot, "options": {"time_limit": 0.001}}
    response = TestClient(app).post("/v1/solve", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["status"], answer["termination"]) in PROVEN_OR_CUT
    assert len(answer["jobs"]) == len(snapshot["jobs"])
