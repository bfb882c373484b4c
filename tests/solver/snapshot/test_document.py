"""The snapshot schema rejects bad input with the field and the reason; odd-but-valid passes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from apportion.solver import InputError, parse_snapshot
from apportion.solver.snapshot import Snapshot


def snapshot(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "gpu_types": [{"name": "k80", "count": 2}, {"name": "v100", "count": 1}],
        "jobs": [
            {"id": "a", "throughput": {"k80": 1.0, "v100": 3.0}},
            {"id": "b", "scale_factor": 2, "throughput": {"k80": 2.0}},
        ],
    }
    base.update(changes)
    return base


def errors_of(data: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(InputError) as caught:
        parse_snapshot(data)
    return [(e.path, e.msg) for e in caught.value.errors]


def test_valid_snapshot_keeps_every_job() -> None:
    parsed = parse_snapshot(snapshot())
    assert [j.id for j in parsed.jobs] == ["a", "b"]
    assert parsed.jobs[1].scale_factor == 2
    assert parsed.jobs[0].weight == 1.0


def test_duplicate_job_ids_name_the_second_occurrence() -> None:
    data = snapshot(jobs=[{"id": "a"}, {"id": "b"}, {"id": "a"}])
    assert errors_of(data) == [("snapshot.jobs[2].id", "duplicate job id 'a'")]


def test_throughput_on_unknown_type_is_rejected() -> None:
    data = snapshot(jobs=[{"id": "a", "throughput": {"a100": 1.0}}])
    assert errors_of(data) == [("snapshot.jobs[0].throughput.a100", "unknown GPU type 'a100'")]


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_non_finite_or_negative_throughput_is_rejected(bad: float) -> None:
    data = snapshot(jobs=[{"id": "a", "throughput": {"k80": bad}}])
    (path, _), *rest = errors_of(data)
    assert path == "snapshot.jobs[0].throughput.k80" and not rest


@pytest.mark.parametrize(
    ("job", "field"),
    [
        ({"id": "a", "scale_factor": 0}, "scale_factor"),
        ({"id": "a", "weight": 0}, "weight"),
        ({"id": "a", "weight": math.nan}, "weight"),
        ({"id": "a", "steps_remaining": -5}, "steps_remaining"),
        ({"id": "a", "arrival_time": math.inf}, "arrival_time"),
        ({"id": "a", "typo_field": 1}, "typo_field"),
    ],
)
def test_bad_job_fields_are_named(job: dict[str, Any], field: str) -> None:
    assert [p for p, _ in errors_of(snapshot(jobs=[job]))] == [f"snapshot.jobs[0].{field}"]


def test_every_bad_field_is_reported_at_once() -> None:
    data = snapshot(jobs=[{"id": "a", "scale_factor": 0}, {"id": "b", "weight": -1}])
    assert {p for p, _ in errors_of(data)} == {
        "snapshot.jobs[0].scale_factor",
        "snapshot.jobs[1].weight",
    }


@pytest.mark.parametrize(
    "gpu_types", [[], [{"name": "k80", "count": 0}], [{"name": "k80", "count": 0}] * 1]
)
def test_empty_cluster_is_rejected(gpu_types: list[dict[str, Any]]) -> None:
    assert errors_of(snapshot(gpu_types=gpu_types, jobs=[])) == [
        ("snapshot.gpu_types", "the cluster is empty: no GPUs of any type")
    ]


def test_negative_gpu_count_and_duplicate_type() -> None:
    assert [p for p, _ in errors_of(snapshot(gpu_types=[{"name": "k80", "count": -1}]))] == [
        "snapshot.gpu_types[0].count"
    ]
    dup = snapshot(gpu_types=[{"name": "k80", "count": 1}, {"name": "k80", "count": 1}], jobs=[])
    assert errors_of(dup) == [("snapshot.gpu_types", "duplicate GPU type 'k80'")]


def test_jobs_that_cannot_run_are_valid_input() -> None:
    data = snapshot(
        jobs=[{"id": "nowhere"}, {"id": "wide", "scale_factor": 64, "throughput": {"k80": 1}}]
    )
    assert len(parse_snapshot(data).jobs) == 2


def test_json_schema_documents_the_fields() -> None:
    schema = Snapshot.model_json_schema()
    text = json.dumps(schema)
    assert "scale_factor" in text and "price_per_hour" in text
    assert schema["required"] == ["gpu_types"]
