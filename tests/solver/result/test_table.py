"""A result's jobs as columns (solver/result/table.py, render.py): the same answer in either
layout, `JobResult` objects only for the rows read, and columns read back as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from apportion.refdata.synthetic import random_columns, random_snapshot
from apportion.solver import SolveResult, solve
from apportion.solver.result import JobResultColumns
from apportion.solver.result.render import answer_json
from apportion.solver.result.table import JobTable
from tests.conftest import FIXTURES

# Answers with every kind of per-job part: shares, metrics (floats with nulls, integers,
# strings, booleans), reasons, placements.
CASES = [
    ("gavel_physical_96.json", "water_filling", {}),
    ("gavel_mix_256.json", "fifo", {}),
    ("gavel_mix_256.json", "finish_time_fairness", {}),
    ("deadline_example.json", "deadline_admission", {}),
    ("deepshare_cluster.json", "contention_placement", {}),
    ("gavel_physical_96.json", "makespan", {"explain": True}),
]


def snapshot(name: str) -> dict[str, Any]:
    """A fixture, its jobs given what FIFO and finish-time fairness need where they lack it."""
    doc: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    for i, job in enumerate(doc.get("jobs", [])):
        job.setdefault("arrival_time", float(i % 7))
        job.setdefault("steps_remaining", 1000.0 * (1 + i % 5))
        job.setdefault("time_since_start", 10.0 * (i % 3))
    return doc


def rows_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs of a result document as rows, whichever layout it writes them in."""
    jobs = document["jobs"]
    if isinstance(jobs, list):
        return jobs
    table = JobTable.from_columns(jobs)
    rows = SolveResult.model_construct(**{"jobs": list(table)}).model_dump(include={"jobs"})
    out: list[dict[str, Any]] = json.loads(json.dumps(rows["jobs"]))
    return out


def without_timing(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in ("jobs", "solver")}


@pytest.mark.parametrize(("fixture", "policy", "options"), CASES, ids=lambda c: str(c))
def test_both_layouts_write_the_same_answer(
    fixture: str, policy: str, options: dict[str, Any]
) -> None:
    doc = snapshot(fixture)
    rows = solve(doc, policy, {**options, "jobs_layout": "rows"})
    columns = solve(doc, policy, {**options, "jobs_layout": "columns"})
    as_rows, as_columns = json.loads(answer_json(rows)), json.loads(answer_json(columns))
    assert isinstance(as_rows["jobs"], list) and isinstance(as_columns["jobs"], dict)
    JobResultColumns.model_validate(as_columns["jobs"])
    assert rows_of(as_columns) == as_rows["jobs"]
    assert without_timing(as_columns) == without_timing(as_rows)
    # pydantic's own writer (model_dump_json) writes the same document as orjson's path.
    assert json.loads(columns.model_dump_json()) == as_columns
    read = SolveResult.model_validate_json(answer_json(columns))
    assert isinstance(read.jobs, JobTable) and list(read.jobs) == list(rows.jobs)
    assert json.loads(answer_json(read)) == as_columns


@pytest.mark.parametrize(("fixture", "policy", "options"), CASES, ids=lambda c: str(c))
def test_rows_read_one_by_one_are_the_rows_read_at_once(
    fixture: str, policy: str, options: dict[str, Any]
) -> None:
    result = solve(snapshot(fixture), policy, options)
    table = result.jobs
    assert isinstance(table, JobTable)
    picked = [table[0], *table[2:9:3], table[-1], result.job(table.ids[len(table) // 2])]
    assert "rows" not in table.__dict__  # nothing but those was built
    everything = list(table)
    n = len(everything)
    assert picked == [everything[0], *everything[2:9:3], everything[-1], everything[n // 2]]
    with pytest.raises(KeyError):
        result.job("no such job")
    with pytest.raises(IndexError):
        table[n]


def test_a_columnar_snapshot_gets_a_columnar_answer_unless_asked_otherwise() -> None:
    columns = random_columns(40, 3, seed=5)
    assert isinstance(json.loads(answer_json(solve(columns)))["jobs"], dict)
    assert isinstance(json.loads(answer_json(solve(columns, jobs_layout="rows")))["jobs"], list)
    rows = random_snapshot(40, 3, seed=5)
    assert isinstance(json.loads(answer_json(solve(rows)))["jobs"], list)
    as_columns = json.loads(answer_json(solve(rows, jobs_layout="columns")))["jobs"]
    assert len(as_columns["id"]) == 40 and set(as_columns["allocation"]) == {"gpu0", "gpu1", "gpu2"}


def test_the_columns_hold_the_allocation_and_its_throughputs() -> None:
    doc = random_columns(60, 4, seed=9)
    result = solve(doc, jobs_layout="columns")
    jobs = json.loads(answer_json(result))["jobs"]
    x = np.array([jobs["allocation"][name] for name in ("gpu0", "gpu1", "gpu2", "gpu3")]).T
    throughput = np.array([doc["jobs"]["throughput"][f"gpu{k}"] for k in range(4)]).T
    # Each job's effective throughput is Σ_k T_jk X_jk, and no job gets more than all its time.
    assert np.allclose(jobs["effective_throughput"], (throughput * x).sum(axis=1))
    assert (x.sum(axis=1) <= 1 + 1e-9).all() and (x >= 0).all()
    assert jobs["id"] == doc["jobs"]["id"] and jobs["reason"] == [None] * 60


def test_a_bad_column_in_an_answer_is_refused() -> None:
    jobs = {
        "id": ["a", "b"],
        "allocation": {"v100": [0.5]},
        "effective_throughput": [1.0, 2.0],
        "normalized_share": None,
        "reason": [None, None],
        "metrics": {},
        "placement": [None, None],
    }
    document = json.loads(answer_json(solve(random_snapshot(2, 1, seed=1))))
    with pytest.raises(ValueError, match=r"jobs.allocation.v100 has 1 entries and jobs.id has 2"):
        SolveResult.model_validate({**document, "jobs": jobs})


def test_every_fixture_reads_back_in_either_layout(tmp_path: Path) -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        result = solve(json.loads(path.read_text()), jobs_layout="columns")
        read = SolveResult.model_validate_json(answer_json(result))
        assert list(read.jobs) == list(result.jobs), path.name
