"""Snapshots on which the Tiresias policies once answered wrong, each with the answer worked out
by hand: unfit jobs that bent the priority level, a preemption cap the greedy admission broke,
a gang started on fewer GPUs than it asked for, and an empty job list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion import solve
from apportion.api.main import app

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return document


def placed(result: Any) -> dict[str, dict[str, int] | None]:
    return {job.id: job.placement for job in result.jobs}


@pytest.mark.parametrize("policy", ["tiresias_las", "tiresias_gittins"])
def test_jobs_that_fit_nowhere_do_not_lift_a_lower_queue(policy: str) -> None:
    # One 2-GPU node; `top` (queue 1) and `low` (queue 2, 5,000 GPU-s) each want both GPUs.
    # The most jobs of queue 1 is one: `top` runs, `low` waits for a higher queue. The unfit
    # jobs `big1`, `big2` queue ahead of `top` but can never run: they take no place in it.
    options = {"admission": "exact"}
    for name in ["tiresias_two_unfit_jobs", "tiresias_unfit_job"]:
        snapshot = load(name)
        snapshot["service_distribution"] = {"samples": [100.0, 4000.0, 9000.0]}
        result = solve(snapshot, policy=policy, options=options)
        assert result.status.value == "optimal"
        got = placed(result)
        assert got["top"] == {"n0": 2}
        assert got["low"] is None
        low = next(j for j in result.jobs if j.id == "low")
        assert low.metrics["wait_reason"] == "higher_queue"
        assert all(got[j] is None for j in got if j.startswith("big"))


@pytest.mark.parametrize("cap", [0, 1])
def test_greedy_admission_keeps_the_preemption_cap(cap: int) -> None:
    # j1 holds all of type a, j2 all of type b; j0 (queue 1) wants 4 GPUs of either. Stopping
    # j1 for j0 pushes j0's second choice onto b's GPUs in the first pass, which stops j2 too.
    case = load("tiresias_greedy_cap")
    options = {**case["options"], "max_preemptions": cap}
    result = solve(case["snapshot"], policy=case["policy"], options=options)
    got = placed(result)
    running = {"j1": {"n0": 2, "n1": 2}, "j2": {"n2": 2, "n3": 8}}
    stopped = [j for j, where in running.items() if got[j] != where]
    assert len(stopped) <= cap
    assert result.summary["preempted"] == len(stopped)
    if cap == 0:
        assert got["j0"] is None  # nothing is free without a preemption


def test_a_gang_gets_every_gpu_it_asks_for() -> None:
    # 5 workers on nodes of 2, 2, 1 GPUs: the only placement is (2, 2, 1); the least maximum
    # load over its PS assignments (brute force, `test_network_load`) is 77.
    result = solve(load("network_load_broken_gang"), policy="network_load_placement")
    assert result.status.value == "optimal"
    assert result.jobs[0].placement == {"n0": 2, "n1": 2, "n2": 1}
    assert result.objective == pytest.approx(77.0)


SERVICE = {"histogram": [{"gpu_seconds": 100.0, "count": 3}, {"gpu_seconds": 9000.0, "count": 1}]}
EMPTY_CASES = [
    ("tiresias_las", {}, None),
    ("tiresias_las", {"admission": "greedy"}, None),
    ("tiresias_las", {"placement": "network_load"}, None),
    ("tiresias_gittins", {}, {"samples": [100.0, 4000.0]}),
    ("tiresias_gittins", {"quantum": "sup"}, SERVICE),
    ("network_load_placement", {}, None),
]


@pytest.mark.parametrize(("policy", "options", "service"), EMPTY_CASES)
def test_an_empty_job_list_is_answered(
    policy: str, options: dict[str, Any], service: dict[str, Any] | None
) -> None:
    snapshot = {**load("tiresias_empty_queue"), "service_distribution": service}
    result = solve(snapshot, policy=policy, options=options)
    assert result.status.value == "optimal"  # greedy too: every job (none) runs
    assert result.jobs == []


def test_an_empty_job_list_over_http() -> None:
    client = TestClient(app)
    for policy, options, service in EMPTY_CASES:
        snapshot = {**load("tiresias_empty_queue"), "service_distribution": service}
        body = {"policy": policy, "snapshot": snapshot, "options": options}
        response = client.post("/v1/solve", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["jobs"] == []


def test_preemption_costs_are_compared_as_given() -> None:
    # One 4-GPU node held by A (2 GPUs × 1.1 s = 2.2) and B (2 × 1.25 s = 2.5), both below the
    # top queue; `w` (top queue) needs 2 GPUs: one of them stops. The cheaper is A, although
    # it started first (counted in whole seconds rounded up, both cost 3 and B stopped).
    def job(name: str, start: float, seconds: float) -> dict[str, Any]:
        return {
            "id": name,
            "scale_factor": 2,
            "throughput": {"a": 1.0},
            "placement": {"n0": 2},
            "attained_service": 500.0,
            "started_at": start,
            "overhead_seconds": seconds,
        }

    snapshot = {
        "gpu_types": [{"name": "a", "count": 4}],
        "nodes": [{"id": "n0", "gpus": 4, "gpu_type": "a"}],
        "jobs": [
            job("A", 0.0, 1.1),
            job("B", 1.0, 1.25),
            {"id": "w", "scale_factor": 2, "throughput": {"a": 1.0}, "arrival_time": 5.0},
        ],
    }
    result = solve(snapshot, policy="tiresias_las", options={"thresholds": [100.0]})
    assert result.status.value == "optimal"
    assert placed(result) == {"A": None, "B": {"n0": 2}, "w": {"n0": 2}}
    assert result.summary["preemption_cost_gpu_seconds"] == pytest.approx(2.2)
