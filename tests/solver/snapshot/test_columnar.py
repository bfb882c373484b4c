"""Jobs given as columns (solver/snapshot/columnar.py): the same snapshot as the list of jobs it
stands for, the same answers, and every refusal with the per-job schema's own field and reason,
located by column and row."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.refdata.synthetic import random_columns, random_snapshot
from apportion.solver import InputError, parse_snapshot, solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.column_values import job_documents
from apportion.solver.snapshot.columnar import ROW_ERRORS, JobsAsColumns
from apportion.solver.snapshot.columns import FIELDS, JobColumns

GPU_TYPES = [{"name": "k80", "count": 4}, {"name": "v100", "count": 2}]
TIMING = {"load_seconds", "validate_seconds", "build_seconds", "solve_seconds", "total_seconds"}
OPTIONAL_REALS = ("steps_remaining", "time_since_start", "arrival_time", "isolated_time_done")


def as_columns(jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """The columns a list of job documents stands for: null where a job leaves a field out."""
    keys = dict.fromkeys(k for job in jobs for k in job if k != "throughput")
    out: dict[str, Any] = {"id": [job.get("id") for job in jobs]}
    out |= {k: [job.get(k) for job in jobs] for k in keys if k != "id"}
    types = dict.fromkeys(t for job in jobs for t in job.get("throughput", {}))
    if types:
        out["throughput"] = {t: [job.get("throughput", {}).get(t) for job in jobs] for t in types}
    return out


@st.composite
def plain_jobs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid plain jobs: each field given or left out at random."""
    reals = st.floats(0.1, 50, allow_nan=False)
    jobs = []
    for i in range(draw(st.integers(1, 12))):
        job: dict[str, Any] = {"id": f"job-{i}"}
        rates = {t: draw(reals) for t in ("k80", "v100") if draw(st.booleans())}
        if draw(st.booleans()):
            job["throughput"] = rates
        if draw(st.booleans()):
            job["scale_factor"] = draw(st.sampled_from([1, 2, 4]))
        if draw(st.booleans()):
            job["weight"] = draw(st.sampled_from([1, 2.5, 0.5]))
        for name in OPTIONAL_REALS:
            if draw(st.integers(0, 3)) == 0:
                job[name] = draw(reals)
        if draw(st.integers(0, 3)) == 0:
            job["workload_class"] = draw(st.sampled_from(["LM", "ResNet-50"]))
        jobs.append(job)
    return jobs


def answer(document: dict[str, Any], policy: str) -> dict[str, Any]:
    """The result, or the fields the policy needs and misses (located as columns name them)."""
    try:
        result = solve(copy.deepcopy(document), policy, jobs_layout="rows")
    except InputError as exc:
        by_row = isinstance(document["jobs"], list)
        return {"errors": {(in_column_form(e.loc) if by_row else e.loc, e.msg) for e in exc.errors}}
    return result.model_dump(mode="json", exclude={"solver": TIMING})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_jobs(), st.sampled_from(["max_min_fairness", "finish_time_fairness", "fifo"]))
def test_a_snapshot_as_rows_and_as_columns_gets_the_same_answer(
    jobs: list[dict[str, Any]], policy: str
) -> None:
    rows = {"gpu_types": GPU_TYPES, "jobs": jobs}
    columns = {"gpu_types": GPU_TYPES, "jobs": as_columns(jobs)}
    by_rows, by_columns = parse_snapshot(copy.deepcopy(rows)), parse_snapshot(columns)
    assert isinstance(by_columns.jobs, JobColumns) and by_columns.jobs.layout == "columns"
    assert list(by_columns.jobs) == list(Snapshot.model_validate(rows).jobs)
    a, b = ClusterArrays.from_snapshot(by_rows), ClusterArrays.from_snapshot(by_columns)
    for name in ("throughput", "scale_factor", "weight", "steps_remaining", "arrival_time"):
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
    assert answer(rows, policy) == answer(columns, policy)


#: Bad values a job document refuses, by field (a null is no bad value for a column: it is
#: the default there, as leaving the field out is in a job).
BAD = {
    "id": ["", " ", "x" * 201, 5, True, None, "job-0"],
    "scale_factor": [0, -1, 2.0, True, "2", 10**9 + 1, 10**30, 10**400],
    "weight": [0, -1.0, True, "1", float("nan"), float("inf"), 1e16, 1e-13, 10**400],
    "steps_remaining": [-1, 1e-13, 1e16, "5", False, float("nan")],
    "arrival_time": [1e16, -1e16, 1e-13, "now", float("-inf")],
    "deadline": [-1e16, True],
    "workload_class": ["", " ", 7],
    "consolidate": [1, "yes", 0.0],
    "throughput": [-1, 1e16, "3", True, float("nan")],
}
FAULTS = [(field, value) for field, values in BAD.items() for value in values]


def column_errors(document: dict[str, Any]) -> set[tuple[Any, ...]]:
    try:
        parse_snapshot(document)
    except InputError as exc:
        return {(e.loc, e.msg, e.type) for e in exc.errors}
    return set()


def in_column_form(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A job document's error location as a column's: (jobs, j, field, …) → (jobs, field, …, j)."""
    head, row, rest = loc[:2], loc[2], loc[3:]
    return (*head, *rest, row)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_jobs(), st.sampled_from(FAULTS), st.data())
def test_a_bad_entry_is_refused_with_the_field_and_reason_of_the_row_form(
    jobs: list[dict[str, Any]], fault: tuple[str, Any], data: st.DataObject
) -> None:
    field, value = fault
    j = data.draw(st.integers(0, len(jobs) - 1))
    if field == "throughput":
        jobs[j]["throughput"] = {**jobs[j].get("throughput", {}), "v100": value}
    else:
        jobs[j][field] = value
    rows = {"gpu_types": GPU_TYPES, "jobs": jobs}
    try:
        Snapshot.model_validate(copy.deepcopy(rows))
    except Exception as exc:  # a ValidationError, rendered as parse_snapshot renders it
        expected = InputError.from_validation(exc, ("snapshot",)).errors  # type: ignore[arg-type]
    else:
        expected = ()  # an id repeated at its own row (job-0 at row 0) is no fault
    wanted = {(in_column_form(e.loc), e.msg, e.type) for e in expected}
    assert column_errors({"gpu_types": GPU_TYPES, "jobs": as_columns(jobs)}) == wanted


@pytest.mark.parametrize(
    ("column", "loc", "reason"),
    [
        (np.array([1.0, 0.0, 2.0]), ("snapshot", "jobs", "weight", 1), "greater than 0"),
        (np.array([True, True, False]), ("snapshot", "jobs", "weight", 0), "a valid number"),
        (np.array([1.0, np.nan, 2.0]), ("snapshot", "jobs", "weight", 1), "a finite number"),
        (np.array(["1", "2", "3"]), ("snapshot", "jobs", "weight", 0), "a valid number"),
    ],
)
def test_numpy_columns_are_refused_as_their_values_would_be(
    column: np.ndarray, loc: tuple[Any, ...], reason: str
) -> None:
    jobs = {"id": ["a", "b", "c"], "throughput": {"k80": np.ones(3)}, "weight": column}
    with pytest.raises(InputError) as caught:
        parse_snapshot({"gpu_types": GPU_TYPES, "jobs": jobs})
    assert caught.value.errors[0].loc == loc and reason in caught.value.errors[0].msg


def test_numpy_columns_need_no_python_numbers_and_masked_entries_are_null() -> None:
    jobs = {
        "id": np.array(["a", "b", "c"]),
        "scale_factor": np.array([1, 2, 1], dtype=np.int32),
        "throughput": {"v100": np.array([2.0, 0.0, 1.5]), "k80": np.array([1, 1, 0])},
        "deadline": np.ma.masked_array([5.0, 0.0, -3.0], mask=[False, True, False]),
        "weight": np.ma.masked_array([2.0, -1.0, 1.0], mask=[False, True, False]),
    }
    snap = parse_snapshot({"gpu_types": GPU_TYPES, "now": 0, "jobs": jobs})
    assert [job.id for job in snap.jobs] == ["a", "b", "c"]
    assert snap.jobs[1].deadline is None and snap.jobs[1].weight == 1.0  # masked: the default
    assert snap.jobs[0].deadline == 5.0 and snap.jobs[2].deadline == -3.0
    problem = ClusterArrays.from_snapshot(snap)
    assert problem.throughput.tolist() == [[1.0, 2.0], [1.0, 0.0], [0.0, 1.5]]
    assert problem.scale_factor.tolist() == [1.0, 2.0, 1.0]


@pytest.mark.parametrize(
    ("jobs", "loc", "reason"),
    [
        ({"id": ["a", "b"], "weight": [1.0]}, ("weight",), "has 1 entries and `id` has 2"),
        ({"id": ["a"], "throughput": {"a100": [1.0]}}, ("throughput", "a100"), "unknown GPU"),
        ({"id": ["a", "b", "a"]}, ("id", 2), "duplicate job id 'a'"),
        ({"id": ["a"], "placement": [{"n0": 1}]}, ("placement",), "give the jobs as a list"),
        ({"id": ["a"], "entity": ["e"]}, ("entity",), "give the jobs as a list"),
        ({"id": ["a"], "wieght": [1.0]}, ("wieght",), "Extra inputs are not permitted"),
        ({"weight": [1.0]}, ("id",), "Field required"),
        ({"id": "a"}, ("id",), "a valid list"),
        ({"id": ["a"], "weight": 2.0}, ("weight",), "a valid list"),
        ({"id": ["a"], "weight": None}, ("weight",), "a valid list"),
        ({"id": ["a"], "throughput": [1.0]}, ("throughput",), "a valid dictionary"),
        ({"id": ["a"], "throughput": {"k80": np.ones((1, 1))}}, ("throughput", "k80"), "1-D"),
    ],
)
def test_columns_that_cannot_stand_for_jobs_are_refused_naming_the_column(
    jobs: dict[str, Any], loc: tuple[Any, ...], reason: str
) -> None:
    with pytest.raises(InputError) as caught:
        parse_snapshot({"gpu_types": GPU_TYPES, "jobs": jobs})
    found = {e.loc: e.msg for e in caught.value.errors}
    assert ("snapshot", "jobs", *loc) in found, found
    assert reason.replace("1-D", "one-dimensional, not 2-D") in found[("snapshot", "jobs", *loc)]


def test_an_unknown_type_given_nothing_is_no_error_as_in_a_job_that_leaves_it_out() -> None:
    jobs = {"id": ["a", "b"], "throughput": {"k80": [1.0, 2.0], "a100": [None, None]}}
    assert len(parse_snapshot({"gpu_types": GPU_TYPES, "jobs": jobs}).jobs) == 2


def test_a_column_full_of_bad_entries_names_the_first_few_and_counts_the_rest() -> None:
    jobs = {"id": [f"j{i}" for i in range(50)], "weight": [0] * 50}
    with pytest.raises(InputError) as caught:
        parse_snapshot({"gpu_types": GPU_TYPES, "jobs": jobs})
    errors = caught.value.errors
    assert [e.loc[-1] for e in errors[:ROW_ERRORS]] == list(range(ROW_ERRORS))
    assert errors[-1].loc == ("snapshot", "jobs", "weight")
    assert errors[-1].msg == f"and {50 - ROW_ERRORS} more entries refused"
    assert str(caught.value).startswith("snapshot.jobs.weight[0]: Input should be greater than 0")


def test_job_pairs_are_checked_against_jobs_given_as_columns() -> None:
    pair = {"a": "a", "b": "zz", "throughput": {"k80": [1.0, 1.0]}}
    doc = {"gpu_types": GPU_TYPES, "jobs": {"id": ["a", "b"]}, "job_pairs": [pair]}
    with pytest.raises(InputError) as caught:
        parse_snapshot(doc)
    assert any("zz" in e.msg for e in caught.value.errors)


def test_a_snapshot_given_as_columns_is_written_back_as_columns() -> None:
    doc = random_columns(30, 3, seed=4)
    snap = parse_snapshot(doc)
    written = snap.model_dump(mode="json")
    assert set(written["jobs"]) == {"id", "scale_factor", "weight", "throughput"}
    again = parse_snapshot(written)
    assert list(again.jobs) == list(snap.jobs)
    assert job_documents(written["jobs"]) == [
        job.model_dump(include={"id", "scale_factor", "weight", "throughput"}) for job in snap.jobs
    ]


def test_random_columns_is_random_snapshot_in_columns() -> None:
    rows, columns = random_snapshot(200, 5, seed=7), random_columns(200, 5, seed=7)
    a = ClusterArrays.from_snapshot(parse_snapshot(rows))
    b = ClusterArrays.from_snapshot(parse_snapshot(columns))
    assert a.job_ids == b.job_ids
    for name in ("throughput", "scale_factor", "weight", "gpu_count"):
        assert np.array_equal(getattr(a, name), getattr(b, name))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_jobs())
def test_the_schema_of_columns_accepts_what_the_columns_accept(jobs: list[dict[str, Any]]) -> None:
    # The JSON Schema's model and the columns' own checks agree on valid columns.
    columns = as_columns(jobs)
    JobsAsColumns.model_validate(columns)
    parse_snapshot({"gpu_types": GPU_TYPES, "jobs": columns})
    assert set(JobsAsColumns.model_fields) == FIELDS


#: Numbers numpy columns can hold that a field refuses (the plain arrays are read at once).
NUMPY_BAD: dict[str, list[Any]] = {
    "weight": [0.0, -1.0, np.nan, np.inf, 1e16, 1e-13],
    "steps_remaining": [-1.0, 1e-13, 1e16, np.nan],
    "arrival_time": [1e16, -1e16, 1e-13, -np.inf],
    "throughput": [-1.0, 1e16, 1e-13, np.nan],
    "scale_factor": [0, -1, 10**9 + 1],
}


@settings(max_examples=120, deadline=None, derandomize=True)
@given(plain_jobs(), st.data())
def test_numpy_columns_read_at_once_answer_as_their_lists_do(
    jobs: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Complete numpy columns (every job gives every field), throughputs in any order and for
    some types only, valid or with one bad number: the same snapshot, or the same errors, as
    the same columns given as lists."""
    types = data.draw(st.permutations(["k80", "v100"]))[: data.draw(st.integers(1, 2))]
    lists: dict[str, Any] = {
        "id": [job["id"] for job in jobs],
        "scale_factor": [job.get("scale_factor", 1) for job in jobs],
        "weight": [float(job.get("weight", 1.0)) for job in jobs],
        "steps_remaining": [job.get("steps_remaining", 5.0) for job in jobs],
        "arrival_time": [job.get("arrival_time", 0.0) for job in jobs],
        "throughput": {t: [job.get("throughput", {}).get(t, 0.0) for job in jobs] for t in types},
    }
    if data.draw(st.booleans()):
        field = data.draw(st.sampled_from(sorted(NUMPY_BAD)))
        j = data.draw(st.integers(0, len(jobs) - 1))
        column = lists["throughput"][types[0]] if field == "throughput" else lists[field]
        column[j] = data.draw(st.sampled_from(NUMPY_BAD[field]))
    arrays = {
        **{k: np.array(v) for k, v in lists.items() if k not in ("id", "throughput")},
        "id": lists["id"],
        "throughput": {t: np.array(v) for t, v in lists["throughput"].items()},
    }
    as_lists = {"gpu_types": GPU_TYPES, "jobs": copy.deepcopy(lists)}
    as_arrays = {"gpu_types": GPU_TYPES, "jobs": arrays}
    assert column_errors(as_arrays) == column_errors(as_lists)
    if not column_errors(as_lists):
        a, b = parse_snapshot(as_lists), parse_snapshot(as_arrays)
        assert a.jobs.columns() == b.jobs.columns()  # type: ignore[attr-defined]
        x, y = ClusterArrays.from_snapshot(a), ClusterArrays.from_snapshot(b)
        for name in ("throughput", "scale_factor", "weight", "steps_remaining", "arrival_time"):
            assert np.array_equal(getattr(x, name), getattr(y, name), equal_nan=True)
