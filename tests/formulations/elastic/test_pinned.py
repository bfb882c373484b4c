"""Pinned jobs (restarting: they keep their `current` configuration this round) in every elastic
policy, on the snapshots that showed them counted twice or given a share on top of what they
hold; the right answers were worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apportion.solver import Status, solve

DATA = Path(__file__).parent / "data"
POLICIES = ("sia", "ones", "elastic_max_goodput", "elastic_max_min")


def _load(name: str) -> dict[str, Any]:
    snapshot: dict[str, Any] = json.loads((DATA / name).read_text())
    return snapshot


def test_max_min_pinned_job_takes_no_share_of_the_rest() -> None:
    # j0 holds 2 of the 4 GPUs; j1 runs on the other 2 all the time: level 1, nothing idle
    result = solve(_load("elastic_max_min_pinned.json"), policy="elastic_max_min")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.0)
    pinned, other = result.jobs
    assert pinned.allocation == pytest.approx({"a": 1.0})
    assert pinned.metrics["gpus"] == pytest.approx(2.0)
    assert other.allocation == pytest.approx({"a": 1.0})
    assert other.metrics["gpus"] == pytest.approx(2.0)
    assert other.metrics["normalized_goodput"] == pytest.approx(1.0)
    assert result.gpu_types[0].used == pytest.approx(4.0)
    assert dict(result.summary["configuration_shares"]["j0"]) == pytest.approx({0: 1.0})


@pytest.mark.parametrize("policy", POLICIES)
def test_pinned_job_matching_two_configurations_is_counted_once(policy: str) -> None:
    # `current` (b × 1) matches both batch sizes; the job keeps its one GPU of the one there is
    result = solve(_load("elastic_pinned_two_matching.json"), policy=policy)
    assert result.status is Status.OPTIMAL
    (job,) = result.jobs
    assert job.allocation == pytest.approx({"b": 1.0})
    assert job.metrics["gpus"] == pytest.approx(1.0)
    assert result.gpu_types[0].used == pytest.approx(1.0)
    assert not result.warnings
    if policy != "elastic_max_min":
        # the batch size of the most goodput: the same GPU, the better configuration
        assert job.metrics["configuration"] == 1
        assert job.metrics["restart"] is False


def test_pinned_job_with_a_waiting_job_beside_it() -> None:
    # the pinned job holds one of two GPUs (counted once); the other job takes the second
    snapshot = _load("elastic_pinned_two_matching.json")
    snapshot["gpu_types"][0]["count"] = 2
    snapshot["jobs"].append(
        {"id": "q", "elastic": {"remaining": 10,
         "configurations": [{"gpu_type": "b", "gpus": 1, "goodput": 1.0}]}}
    )  # fmt: skip
    for policy in POLICIES:
        result = solve(snapshot, policy=policy)
        assert result.status is Status.OPTIMAL, policy
        assert [j.allocation for j in result.jobs] == [{"b": 1.0}, {"b": 1.0}], policy
        assert result.gpu_types[0].used == pytest.approx(2.0), policy


@pytest.mark.parametrize("policy", POLICIES)
def test_pinned_jobs_over_capacity_are_infeasible(policy: str) -> None:
    # both jobs pinned on 2 GPUs each, 3 GPUs: the snapshot asks for what cannot be
    snapshot = _load("elastic_max_min_pinned.json")
    snapshot["gpu_types"][0]["count"] = 3
    for job in snapshot["jobs"]:
        job["elastic"].update(current={"gpu_type": "a", "gpus": 2}, pinned=True, remaining=1.0)
    result = solve(snapshot, policy=policy)
    assert result.status is Status.INFEASIBLE
    assert any("pinned jobs alone hold more GPUs" in w for w in result.warnings)
