"""Jobs as columns through the real service (uvicorn in a subprocess): a columnar snapshot in,
the answer in the layout asked for (by default the snapshot's), refusals as RFC 9457 problems
naming the column and the row, and a what-if on a columnar snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import orjson
import pytest

from apportion.refdata.synthetic import random_columns
from apportion.solver import solve
from tests.api.service import Service, running_service

JOBS = 500


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(workers="1", queue_size="4") as running:
        yield running


def post(service: Service, path: str, body: dict[str, Any]) -> httpx.Response:
    content = orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)
    headers = {"content-type": "application/json"}
    return httpx.post(f"{service.base}{path}", content=content, headers=headers, timeout=120)


def test_a_columnar_snapshot_gets_its_answer_in_columns(service: Service) -> None:
    snapshot = random_columns(JOBS, 4, seed=11)
    response = post(service, "/v1/solve", {"policy": "max_min_fairness", "snapshot": snapshot})
    assert response.status_code == 200, response.text
    body = response.json()
    jobs = body["jobs"]
    assert body["status"] == "optimal" and jobs["id"] == snapshot["jobs"]["id"]
    x = np.array([jobs["allocation"][f"gpu{k}"] for k in range(4)]).T
    throughput = np.array([snapshot["jobs"]["throughput"][f"gpu{k}"] for k in range(4)]).T
    # Σ_k T_jk X_jk per job, no job above all its time, no type above its GPUs.
    assert np.allclose(jobs["effective_throughput"], (throughput * x).sum(axis=1))
    assert (x.sum(axis=1) <= 1 + 1e-9).all()
    used = snapshot["jobs"]["scale_factor"] @ x
    assert (used <= np.array([g["count"] for g in snapshot["gpu_types"]]) + 1e-6).all()
    local = solve(snapshot, "max_min_fairness")
    assert body["objective"] == pytest.approx(local.objective, rel=1e-9)


def test_the_layout_asked_for_wins(service: Service) -> None:
    snapshot = random_columns(60, 3, seed=2)
    body = {"snapshot": snapshot, "options": {"jobs_layout": "rows"}}
    rows = post(service, "/v1/solve", body).json()["jobs"]
    assert [job["id"] for job in rows] == snapshot["jobs"]["id"]
    from_rows = {"snapshot": {**snapshot, "jobs": rows_of(snapshot)}}
    columns = post(service, "/v1/solve", {**from_rows, "options": {"jobs_layout": "columns"}})
    assert columns.json()["jobs"]["id"] == snapshot["jobs"]["id"]
    assert isinstance(post(service, "/v1/solve", from_rows).json()["jobs"], list)


def rows_of(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    jobs = snapshot["jobs"]
    return [
        {
            "id": job_id,
            "scale_factor": int(jobs["scale_factor"][j]),
            "weight": float(jobs["weight"][j]),
            "throughput": {t: float(c[j]) for t, c in jobs["throughput"].items() if c[j] > 0},
        }
        for j, job_id in enumerate(jobs["id"])
    ]


@pytest.mark.parametrize(
    ("change", "loc", "reason"),
    [
        ({"weight": [1.0, 0.0, 2.0]}, ["jobs", "weight", 1], "greater than 0"),
        ({"weight": [1.0, 2.0]}, ["jobs", "weight"], "has 2 entries and `id` has 3"),
        ({"id": ["a", "b", "a"]}, ["jobs", "id", 2], "duplicate job id 'a'"),
        ({"throughput": {"a100": [1, 2, 3]}}, ["jobs", "throughput", "a100"], "unknown GPU"),
        ({"placement": [None, None, None]}, ["jobs", "placement"], "as a list of objects"),
        ({"scale_factor": [1, 2.5, 1]}, ["jobs", "scale_factor", 1], "a valid integer"),
    ],
)
def test_a_bad_column_is_a_problem_naming_the_column_and_row(
    service: Service, change: dict[str, Any], loc: list[Any], reason: str
) -> None:
    jobs = {"id": ["a", "b", "c"], "throughput": {"gpu0": [1.0, 2.0, 3.0]}, **change}
    snapshot = {"gpu_types": [{"name": "gpu0", "count": 2}], "jobs": jobs}
    response = post(service, "/v1/solve", {"snapshot": snapshot})
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    errors = {tuple(e["loc"]): e["msg"] for e in response.json()["errors"]}
    assert reason in errors[("body", "snapshot", *loc)]


def test_a_what_if_on_a_columnar_snapshot(service: Service) -> None:
    before = random_columns(40, 2, seed=8)
    patch = {"gpus": {"gpu0": 20}, "remove_jobs": ["job-3"], "weights": {"job-5": 4.0}}
    response = post(service, "/v1/compare", {"before": before, "patch": patch})
    assert response.status_code == 200, response.text
    changes = {c["id"]: c for c in response.json()["jobs"]}
    assert changes["job-3"]["change"] == "removed"
    assert changes["job-5"]["share_after"] > changes["job-5"]["share_before"]
    after = post(service, "/v1/compare", {"before": before, "after": before}).json()
    assert after["jobs"] == [] and after["unchanged"] == 40
