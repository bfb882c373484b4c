"""One accepted range for the snapshot's numbers, and strict types for its counts, numbers and
flags: what the schema accepts is what the solvers represent, and a typo is an error naming the
field, never a silent conversion (solver/snapshot/types.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from apportion.solver import InputError, parse_snapshot, solve
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.types import MAX_COUNT, MAX_MAGNITUDE, MIN_MAGNITUDE
from tests.conftest import FIXTURES

Path = tuple[str | int, ...]

# Every numeric and boolean field of schema v1 in one valid document.
EVERYTHING: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 16, "price_per_hour": 2.5}],
    "nodes": [
        {"id": "n0", "gpus": 8, "gpu_type": "v100"},
        {"id": "n1", "gpus": 8, "gpu_type": "v100"},
    ],
    "now": 0,
    "lease_seconds": 1200,
    "entities": [{"id": "e", "weight": 1}],
    "jobs": [
        {
            "id": "a",
            "scale_factor": 2,
            "weight": 1,
            "throughput": {"v100": 3.0},
            "steps_remaining": 100,
            "time_since_start": 10,
            "arrival_time": 0,
            "isolated_time_done": 5,
            "deadline": 3600,
            "remaining_time": 60,
            "deadlines": [{"time": 3600, "value": 10}],
            "guaranteed": True,
            "consolidate": False,
            "entity": "e",
            "workload_class": "X",
            "placement": {"n0": 2},
        },
        {"id": "b", "throughput": {"v100": 1.0}, "entity": "e", "workload_class": "Y"},
    ],
    "job_pairs": [{"a": "a", "b": "b", "throughput": {"v100": [1.0, 0.5]}}],
    "contention": {
        "entries": [
            {
                "target": {"workload_class": "X", "gpus": 2, "nodes": 1},
                "co_runner": {"workload_class": "Y", "gpus": 1, "nodes": 1},
                "cs": 1.2,
            }
        ],
        "class_defaults": [{"target_class": "X", "co_runner_class": "Y", "cs": 1.1}],
    },
}

# Real numbers by what they may be: "signed" (0 or either sign), "nonneg", "positive", "cs" (≥ 1).
REALS: dict[Path, str] = {
    ("gpu_types", 0, "price_per_hour"): "nonneg",
    ("now",): "signed",
    ("lease_seconds",): "positive",
    ("entities", 0, "weight"): "positive",
    ("jobs", 0, "weight"): "positive",
    ("jobs", 0, "throughput", "v100"): "nonneg",
    ("jobs", 0, "steps_remaining"): "nonneg",
    ("jobs", 0, "time_since_start"): "nonneg",
    ("jobs", 0, "arrival_time"): "signed",
    ("jobs", 0, "isolated_time_done"): "nonneg",
    ("jobs", 0, "deadline"): "signed",
    ("jobs", 0, "remaining_time"): "nonneg",
    ("jobs", 0, "deadlines", 0, "time"): "signed",
    ("jobs", 0, "deadlines", 0, "value"): "positive",
    ("job_pairs", 0, "throughput", "v100", 1): "nonneg",
    ("contention", "entries", 0, "cs"): "cs",
    ("contention", "class_defaults", 0, "cs"): "cs",
}
COUNTS: list[Path] = [
    ("gpu_types", 0, "count"),
    ("nodes", 1, "gpus"),
    ("jobs", 0, "scale_factor"),
    ("jobs", 0, "placement", "n0"),
    ("contention", "entries", 0, "target", "gpus"),
    ("contention", "entries", 0, "co_runner", "nodes"),
]
FLAGS: list[Path] = [("jobs", 0, "guaranteed"), ("jobs", 0, "consolidate")]


def with_value(path: Path, value: Any, data: dict[str, Any] = EVERYTHING) -> dict[str, Any]:
    out = copy.deepcopy(data)
    here: Any = out
    for key in path[:-1]:
        here = here[key]
    here[path[-1]] = value
    return out


def errors(data: dict[str, Any]) -> dict[Path, str]:
    with pytest.raises(InputError) as caught:
        parse_snapshot(data)
    return {e.loc: e.msg for e in caught.value.errors}


def test_the_document_with_every_field_is_valid() -> None:
    parse_snapshot(EVERYTHING)


@pytest.mark.parametrize("path", list(REALS), ids=str)
@pytest.mark.parametrize("bad", [1e-320, 9.99e-13, 1.000001e15, 1e308, -1e-320])
def test_a_real_out_of_range_is_named_with_the_range(path: Path, bad: float) -> None:
    kind = REALS[path]
    found = errors(with_value(path, bad))
    assert list(found) == [("snapshot", *path)], found
    message = found[("snapshot", *path)]
    if kind == "signed" or (bad >= 1e15 and kind != "cs"):
        assert "1e-12" in message and "1e+15" in message, message
    elif kind == "cs" and bad >= 1e15:
        assert "1e+15" in message, message


@pytest.mark.parametrize("path", list(REALS), ids=str)
def test_reals_at_the_ends_of_the_range_are_accepted(path: Path) -> None:
    kind = REALS[path]
    ends = [MAX_MAGNITUDE, 2] + ([MIN_MAGNITUDE] if kind != "cs" else [])
    ends += [0] if kind in ("signed", "nonneg") else []
    ends += [-MAX_MAGNITUDE, -MIN_MAGNITUDE] if kind == "signed" else []
    for value in ends:
        data = with_value(path, value)
        if path == ("jobs", 0, "deadlines", 0, "time"):
            data["jobs"][0].pop("guaranteed")  # a guarantee for a deadline already past
        try:
            parse_snapshot(data)
        except InputError as exc:  # only cross-field checks may object, never the range
            assert all(e.type != "number_range" for e in exc.errors), (value, exc)


@pytest.mark.parametrize("path", list(REALS), ids=str)
@pytest.mark.parametrize("bad", ["1000", "inf", "NaN", True, False, [1.0], float("inf")])
def test_a_real_must_be_a_finite_json_number(path: Path, bad: Any) -> None:
    assert list(errors(with_value(path, bad))) == [("snapshot", *path)]


@pytest.mark.parametrize("path", COUNTS, ids=str)
@pytest.mark.parametrize("bad", ["8", "2", True, 2.0, 2.5, MAX_COUNT + 1, -1])
def test_a_count_must_be_a_json_integer_in_range(path: Path, bad: Any) -> None:
    assert list(errors(with_value(path, bad))) == [("snapshot", *path)]


@pytest.mark.parametrize("path", FLAGS, ids=str)
@pytest.mark.parametrize("bad", ["true", "yes", 1, 0, "false"])
def test_a_flag_must_be_true_or_false(path: Path, bad: Any) -> None:
    assert list(errors(with_value(path, bad))) == [("snapshot", *path)]


def test_the_readme_typos_no_longer_change_an_answer() -> None:
    base = {"gpu_types": [{"name": "v100", "count": 8}], "jobs": [{"id": "a"}]}
    for bad in ("8", True):
        data = {**base, "gpu_types": [{"name": "v100", "count": bad}]}
        assert ("snapshot", "gpu_types", 0, "count") in errors(data)


def snapshot_with(throughputs: list[float], weight: float = 1.0) -> dict[str, Any]:
    jobs = [{"id": f"j{i}", "throughput": {"v100": t}} for i, t in enumerate(throughputs)]
    jobs[0]["weight"] = weight
    return {"gpu_types": [{"name": "v100", "count": 4}], "jobs": jobs}


@pytest.mark.parametrize(
    ("policy", "data", "where"),
    [
        # Each once ended "error" with no reason, or "optimal" with objective 0 / null.
        ("max_min_fairness", snapshot_with([100.0, 50.0], weight=1e-320), ("jobs", 0, "weight")),
        ("max_min_fairness", snapshot_with([1e308, 50.0]), ("jobs", 0, "throughput", "v100")),
        ("max_total_throughput", snapshot_with([1e308, 1e308]), ("jobs", 0, "throughput", "v100")),
    ],
)
def test_numbers_that_gave_wrong_answers_are_input_errors(
    policy: str, data: dict[str, Any], where: Path
) -> None:
    with pytest.raises(InputError) as caught:
        solve(data, policy=policy)
    assert caught.value.errors[0].loc == ("snapshot", *where)
    assert "out of range" in caught.value.errors[0].msg


def test_absolute_times_in_epoch_seconds_and_milliseconds_pass() -> None:
    for now in (1.8e9, 1.8e12):
        data = {
            "gpu_types": [{"name": "v100", "count": 1, "price_per_hour": 1}],
            "now": now,
            "jobs": [
                {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 10, "deadline": now + 60}
            ],
        }
        assert solve(data, policy="min_cost_slo").status == "optimal"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_bundled_fixture_stays_valid(name: str) -> None:
    parse_snapshot(json.loads((FIXTURES / name).read_text()))


def test_the_json_schema_states_the_range() -> None:
    defs = Snapshot.model_json_schema()["$defs"]
    job = defs["Job"]["properties"]
    assert job["weight"]["minimum"] == MIN_MAGNITUDE
    assert job["weight"]["maximum"] == MAX_MAGNITUDE
    assert job["throughput"]["additionalProperties"]["maximum"] == MAX_MAGNITUDE
    assert job["scale_factor"]["maximum"] == MAX_COUNT
    assert defs["GpuType"]["properties"]["count"]["type"] == "integer"
