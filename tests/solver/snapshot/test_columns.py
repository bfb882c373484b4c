"""The column-wise fast path of `parse_snapshot` accepts and refuses exactly what the full,
job-by-job validation does, with the same values, arrays and answers
(solver/snapshot/columns.py)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.solver import InputError, parse_snapshot, solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.columns import JobColumns, job_columns

GPU_TYPES = [{"name": "k80", "count": 4}, {"name": "v100", "count": 2}]

# Values on both sides of every rule the columns check: types (bool, str, None, NaN), ranges
# (0, the magnitudes' ends, negatives), counts' bounds, names' whitespace and length.
IN_OR_OUT = [0, 0.0, -0.0, 1, 2.5, 1e-12, 9e-13, 1e15, 1.5e15, -1.0, -1e-12, -1e16, 10**20]
NOT_NUMBERS = [10**400, True, "8", None, float("nan"), float("inf")]
REALS = st.sampled_from([*IN_OR_OUT, *NOT_NUMBERS])
COUNTS = st.sampled_from([1, 2, 8, 0, -1, 10**9, 10**9 + 1, 10**30, 2.0, True, "8", None])
NAMES = st.sampled_from(["a", "b", " a", "b ", "", " ", "x" * 200, "x" * 201, 5, None])
TYPE_NAMES = st.sampled_from(["k80", "v100", "p100", " k80", 3])
FIELDS = st.sampled_from(
    [
        "weight",
        "steps_remaining",
        "time_since_start",
        "isolated_time_done",
        "remaining_time",
        "overhead_seconds",
        "arrival_time",
        "deadline",
    ]
)
OTHER = st.sampled_from(
    [
        ("workload_class", "LM"),
        ("workload_class", " "),
        ("workload_class", None),
        ("consolidate", True),
        ("consolidate", 1),
        ("entity", "e"),
        ("placement", None),
        ("deadlines", None),
        ("guaranteed", False),
        ("typo", 1),
    ]
)


@st.composite
def job(draw: st.DrawFn, index: int) -> Any:
    """A well-formed job, then (often) a few fields with drawn, possibly invalid values."""
    doc: dict[str, Any] = {"id": f"job-{index}", "throughput": {"k80": 1.5, "v100": 3.0}}
    if draw(st.booleans()):
        return doc
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["real", "count", "id", "throughput", "other", "drop"]))
        if kind == "real":
            doc[draw(FIELDS)] = draw(REALS)
        elif kind == "count":
            doc["scale_factor"] = draw(COUNTS)
        elif kind == "id":
            doc["id"] = draw(NAMES)
        elif kind == "throughput":
            doc["throughput"] = draw(
                st.one_of(st.dictionaries(TYPE_NAMES, REALS, max_size=3), st.just([1.0]))
            )
        elif kind == "other":
            name, value = draw(OTHER)
            doc[name] = value
        else:
            doc.pop(draw(st.sampled_from(["id", "throughput"])), None)
    return doc


@st.composite
def job_lists(draw: st.DrawFn) -> list[Any]:
    n = draw(st.integers(0, 6))
    jobs = [draw(job(i)) for i in range(n)]
    if n and draw(st.integers(0, 9)) == 0:
        jobs[-1] = draw(st.sampled_from(["job", None, [1]]))  # not a job at all
    return jobs


def full(doc: dict[str, Any]) -> Snapshot | list[tuple[Any, ...]]:
    """Today's validation, job by job: the snapshot, or its errors (location, message, type)."""
    try:
        return Snapshot.model_validate(copy.deepcopy(doc))
    except Exception as exc:  # a ValidationError, rendered as parse_snapshot renders it
        errors = InputError.from_validation(exc, ("snapshot",)).errors  # type: ignore[arg-type]
        return [(e.loc, e.msg, e.type) for e in errors]


def parsed(doc: dict[str, Any]) -> Snapshot | list[tuple[Any, ...]]:
    try:
        return parse_snapshot(copy.deepcopy(doc))
    except InputError as exc:
        return [(e.loc, e.msg, e.type) for e in exc.errors]


def same_arrays(a: ClusterArrays, b: ClusterArrays) -> bool:
    fields = ("throughput", "scale_factor", "weight", "steps_remaining", "time_since_start")
    fields += ("arrival_time", "isolated_time_done", "deadline", "gpu_count")
    return (
        a.job_ids == b.job_ids
        and a.gpu_names == b.gpu_names
        and all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True) for f in fields)
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job_lists())
def test_fast_and_full_paths_accept_and_refuse_the_same_jobs(jobs: list[Any]) -> None:
    doc = {"gpu_types": GPU_TYPES, "jobs": jobs}
    expected, got = full(doc), parsed(doc)
    # Whatever the columns accept, the full validation accepts, with the same values.
    columns = job_columns(copy.deepcopy(jobs), [g["name"] for g in GPU_TYPES])
    if columns is not None:
        assert isinstance(expected, Snapshot)
        assert list(columns) == list(expected.jobs)
        assert columns.ids == [j.id for j in expected.jobs]
    if isinstance(expected, list):  # refused: the same errors, in the same order
        assert got == expected
        return
    assert isinstance(got, Snapshot)
    assert list(got.jobs) == list(expected.jobs)
    assert same_arrays(ClusterArrays.from_snapshot(got), ClusterArrays.from_snapshot(expected))


def test_well_formed_jobs_take_the_fast_path_with_the_full_paths_values() -> None:
    jobs = [
        {"id": " a ", "scale_factor": 2, "weight": 3, "throughput": {"v100": 2, "k80": 0}},
        {"id": "b", "throughput": {}, "deadline": -5.5, "steps_remaining": 1e15},
        {"id": "c", "throughput": {"k80": 1e-12}, "workload_class": "LM", "consolidate": True},
    ]
    doc = {"gpu_types": GPU_TYPES, "jobs": jobs}
    fast = parse_snapshot(copy.deepcopy(doc))
    assert isinstance(fast.jobs, JobColumns)
    slow = Snapshot.model_validate(copy.deepcopy(doc))
    assert fast.jobs[0].id == "a" and fast.jobs[0].weight == 3.0
    assert list(fast.jobs) == slow.jobs and fast == slow
    problem = ClusterArrays.from_snapshot(fast)
    assert problem.throughput.tolist() == [[0.0, 2.0], [0.0, 0.0], [1e-12, 0.0]]
    assert same_arrays(problem, ClusterArrays.from_snapshot(slow))
    # Serialized, as a client sends a parsed snapshot: the same document from either path.
    assert fast.model_dump(mode="json") == slow.model_dump(mode="json")
    assert fast.model_dump_json() == slow.model_dump_json()


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"weight": 0}, ("snapshot", "jobs", 1, "weight")),
        ({"scale_factor": True}, ("snapshot", "jobs", 1, "scale_factor")),
        ({"throughput": {"a100": 1.0}}, ("snapshot", "jobs", 1, "throughput", "a100")),
        ({"id": "job-0"}, ("snapshot", "jobs", 1, "id")),
        ({"steps_remaining": 1e16}, ("snapshot", "jobs", 1, "steps_remaining")),
    ],
)
def test_a_bad_job_among_good_ones_is_reported_as_always(
    change: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    jobs = [{"id": f"job-{i}", "throughput": {"k80": 1.0}} for i in range(3)]
    jobs[1] |= change
    doc = {"gpu_types": GPU_TYPES, "jobs": jobs}
    with pytest.raises(InputError) as caught:
        parse_snapshot(doc)
    assert [e.loc for e in caught.value.errors] == [loc]
    assert caught.value.errors == tuple(
        InputError.from_validation(e, ("snapshot",)).errors[0] for e in _errors(doc)
    )


def _errors(doc: dict[str, Any]) -> list[Any]:
    try:
        Snapshot.model_validate(doc)
    except Exception as exc:
        return [exc]
    return []


def test_the_answer_is_the_same_from_either_path() -> None:
    rng = np.random.default_rng(3)
    jobs = [
        {
            "id": f"job-{i}",
            "scale_factor": int(rng.integers(1, 3)),
            "weight": float(rng.choice([1.0, 2.0])),
            "throughput": {"k80": float(rng.uniform(0.5, 5)), "v100": float(rng.uniform(1, 9))},
        }
        for i in range(40)
    ]
    doc = {"gpu_types": GPU_TYPES, "jobs": jobs}
    fast = parse_snapshot(copy.deepcopy(doc))
    assert isinstance(fast.jobs, JobColumns)
    slow = Snapshot.model_validate(copy.deepcopy(doc))
    timing = {"load_seconds", "validate_seconds", "build_seconds", "solve_seconds"}
    exclude = {"solver": timing | {"total_seconds"}}
    a = solve(fast, "max_min_fairness").model_dump(exclude=exclude)
    b = solve(slow, "max_min_fairness").model_dump(exclude=exclude)
    assert a == b
    assert a["status"] == "optimal" and len(a["jobs"]) == 40
