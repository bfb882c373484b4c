"""Deadline and node fields of the snapshot: valid documents, and clear errors for bad ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from apportion.solver import InputError, Status, parse_snapshot, solve
from tests.cli_runner import invoke


def cluster(**extra: Any) -> dict[str, Any]:
    """Two 8-GPU nodes, 20-minute leases, now = 0."""
    return {
        "gpu_types": [{"name": "v100", "count": 16}],
        "nodes": [{"id": "n1", "gpus": 8}, {"id": "n2", "gpus": 8}],
        "lease_seconds": 1200,
        "now": 0,
        "jobs": [],
        **extra,
    }


def slo(job_id: str, deadlines: list[tuple[float, float]], **extra: Any) -> dict[str, Any]:
    return {
        "id": job_id,
        "remaining_time": 1200,
        "deadlines": [{"time": t, "value": v} for t, v in deadlines],
        **extra,
    }


def errors_of(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(InputError) as caught:
        solve(data, policy="deadline_admission")
    return {e.path: e.msg for e in caught.value.errors}


def test_a_full_deadline_snapshot_is_valid_and_keeps_v1_documents_valid() -> None:
    snap = parse_snapshot(
        cluster(jobs=[slo("a", [(3600, 10), (7200, 5)], guaranteed=True), {"id": "b"}])
    )
    assert snap.jobs[0].deadlines is not None and snap.jobs[0].guaranteed
    assert parse_snapshot({"gpu_types": [{"name": "v100", "count": 2}]}).nodes is None


def test_deadline_options_must_increase() -> None:
    errors = errors_of(cluster(jobs=[slo("a", [(3600, 10), (3600, 8)])]))
    assert "increasing" in errors["snapshot.jobs[0].deadlines[1].time"]


@pytest.mark.parametrize("value", [0, -1])
def test_a_value_must_be_positive(value: float) -> None:
    errors = errors_of(cluster(jobs=[slo("a", [(3600, value)])]))
    assert "greater than 0" in errors["snapshot.jobs[0].deadlines[0].value"]


def test_a_gpu_demand_larger_than_the_cluster_is_answered_with_its_reason() -> None:
    # Valid input a policy cannot serve: declined with the reason, the others still answered.
    data = cluster(jobs=[slo("a", [(3600, 10)], scale_factor=17), slo("b", [(3600, 10)])])
    result = solve(data, policy="deadline_admission")
    assert result.status is Status.OPTIMAL
    assert result.job("a").metrics["guaranteed"] is False and result.job("a").placement is None
    assert "needs 17 GPUs, larger than the cluster's 16" in (result.job("a").reason or "")
    assert result.job("b").metrics["guaranteed"] is True


def test_classes_must_agree_with_the_deadlines() -> None:
    errors = errors_of(
        cluster(
            jobs=[
                slo("strict-two", [(3600, 10), (7200, 5)], job_class="strict"),
                slo("best-with-deadline", [(3600, 10)], job_class="best_effort"),
                {"id": "soft-without", "job_class": "soft"},
                {"id": "guaranteed-without", "guaranteed": True},
            ]
        )
    )
    assert "exactly one" in errors["snapshot.jobs[0].deadlines"]
    assert "no deadline" in errors["snapshot.jobs[1].deadlines"]
    assert "at least one" in errors["snapshot.jobs[2].deadlines"]
    assert "only jobs with deadline" in errors["snapshot.jobs[3].guaranteed"]


def test_nodes_must_match_the_gpu_type_counts_and_be_unique() -> None:
    data = cluster()
    data["nodes"] = [{"id": "n1", "gpus": 8}, {"id": "n1", "gpus": 4}]
    errors = errors_of(data)
    assert "duplicate node id 'n1'" in errors["snapshot.nodes"]
    data["nodes"] = [{"id": "n1", "gpus": 8}, {"id": "n2", "gpus": 4}]
    assert "hold 12 GPUs" in errors_of(data)["snapshot.gpu_types[0].count"]
    data["nodes"] = [{"id": "n1", "gpus": 16, "gpu_type": "a100"}]
    assert "unknown GPU type" in errors_of(data)["snapshot.nodes[0].gpu_type"]


def test_the_policy_names_what_it_needs() -> None:
    data = cluster(jobs=[{"id": "a", "deadlines": [{"time": 3600}]}])
    assert "remaining_time" in errors_of(data)["snapshot.jobs[0].remaining_time"]
    assert "required" in errors_of({**data, "lease_seconds": None})["snapshot.lease_seconds"]
    no_nodes = {k: v for k, v in cluster().items() if k != "nodes"}
    assert "required" in errors_of(no_nodes)["snapshot.nodes"]
    mixed = cluster()
    mixed["nodes"] = [{"id": "n1", "gpus": 8}, {"id": "n2", "gpus": 4}, {"id": "n3", "gpus": 4}]
    assert "homogeneous" in errors_of(mixed)["snapshot.nodes"]


def test_steps_remaining_with_a_throughput_converts_to_remaining_time() -> None:
    # 4,800 steps at 2 steps/s = 2,400 s = 2 leases.
    job = {"id": "a", "steps_remaining": 4800, "throughput": {"v100": 2.0}}
    data = cluster(jobs=[{**job, "deadlines": [{"time": 3600, "value": 1}]}])
    result = solve(data, policy="deadline_admission")
    assert result.job("a").metrics["leases_needed"] == 2


def test_a_past_deadline_of_an_unguaranteed_job_is_not_an_error() -> None:
    result = solve(cluster(jobs=[slo("late", [(-600, 10)])], now=0), policy="deadline_admission")
    assert result.status is Status.OPTIMAL
    job = result.job("late")
    assert job.metrics["guaranteed"] is False
    assert job.reason is not None and "cannot finish before any deadline" in job.reason


def test_http_answers_422_naming_the_field() -> None:
    data = cluster(jobs=[slo("a", [(3600, 10), (1200, 8)])])
    response = TestClient(app).post(
        "/v1/solve", json={"policy": "deadline_admission", "snapshot": data}
    )
    assert response.status_code == 422
    locs = [d["loc"] for d in response.json()["errors"]]
    assert ["body", "snapshot", "jobs", 0, "deadlines", 1, "time"] in locs


def test_http_answers_a_job_larger_than_the_cluster_with_its_reason() -> None:
    data = cluster(jobs=[slo("a", [(3600, 10)], scale_factor=40, guaranteed=True)])
    response = TestClient(app).post(
        "/v1/solve", json={"policy": "deadline_admission", "snapshot": data}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["summary"]["guarantees_broken"] == ["a"]
    assert "larger than the cluster's 16" in body["jobs"][0]["reason"]


def test_cli_answers_a_job_larger_than_the_cluster_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(cluster(jobs=[slo("a", [(3600, 10)], scale_factor=40)])))
    ran = invoke([str(path), "--policy", "chronus"])
    assert ran.exit_code == 0, ran.output
    answer = json.loads(ran.stdout)
    assert "needs 40 GPUs, larger than the cluster's 16" in answer["jobs"][0]["reason"]


def test_cli_exits_2_with_a_one_line_reason(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(cluster(jobs=[slo("a", [(3600, 10)], overhead_seconds=1200)])))
    done = subprocess.run(
        [sys.executable, "-m", "apportion", str(path), "--policy", "chronus"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "overhead_seconds" in done.stderr and "shorter than the lease" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("start", "now", "words"),
    [(700, 600, "cannot start after now"), (0, 1200, "give the start of the lease")],
)
def test_the_lease_start_must_be_the_lease_now_lies_in(
    start: float, now: float, words: str
) -> None:
    errors = errors_of(cluster(now=now, lease_start=start, jobs=[slo("a", [(3600, 10)])]))
    assert words in errors["snapshot.lease_start"]


def test_a_held_lease_names_the_gpus_held_and_leaves_time_to_work() -> None:
    held = slo("a", [(3600, 10)], held_until=1200)
    assert "placement" in errors_of(cluster(jobs=[held]))["snapshot.jobs[0].held_until"]
    slow = slo("a", [(3600, 10)], overhead_seconds=1200)
    assert (
        "shorter than the lease"
        in errors_of(cluster(jobs=[slow]))["snapshot.jobs[0].overhead_seconds"]
    )
