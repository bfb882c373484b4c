"""POST /v1/compare through a real TestClient, and `explain` through POST /v1/solve: the
differences of a hand-solved what-if, every bad field named in a 422, and a side stopped at
the time limit said so (no differences against an allocation it does not have)."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from apportion.solver.compare import difference
from apportion.solver.pipeline import solve
from apportion.solver.result import SolveResult
from apportion.solver.status import Status, Termination
from tests.api.service import long_placement

client = TestClient(app)

# One v100 shared by a and b, c alone on k80 (FORMULATIONS §1 shares: a, b at 2, c at 4/3).
BEFORE: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}},
        {"id": "b", "throughput": {"v100": 1}},
        {"id": "c", "throughput": {"k80": 1}},
    ],
}


def _post(body: dict[str, Any]) -> Any:
    return client.post("/v1/compare", json=body)


def test_a_patch_adding_a_gpu_doubles_the_v100_jobs_time() -> None:
    response = _post({"before": BEFORE, "patch": {"gpus": {"v100": 1}}})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["advisory"].startswith("advisory")
    jobs = {j["id"]: j for j in body["jobs"]}
    # A second v100: a and b run all of their time there (0.5 → 1 each).
    for held in ("a", "b"):
        assert jobs[held]["allocation_delta"] == {"v100": pytest.approx(0.5)}
        assert jobs[held]["throughput_delta"] == pytest.approx(0.5)
    # c keeps its k80 time; its share moves only with the normalizer (prop 3/4 → 3/5).
    assert jobs["c"]["allocation_delta"] == {}
    assert jobs["c"]["share_after"] == pytest.approx(5 / 3)
    sizes = [j["size"] for j in body["jobs"]]
    assert sizes == sorted(sizes, reverse=True)
    assert body["objective_before"] == pytest.approx(4 / 3)
    assert body["objective_delta"] == pytest.approx(body["objective_after"] - 4 / 3)


def test_two_snapshots_with_a_job_added_and_one_removed() -> None:
    after = {**BEFORE, "jobs": [*BEFORE["jobs"][1:], {"id": "d", "throughput": {"k80": 2}}]}
    response = _post({"before": BEFORE, "after": after, "policy": "max_min_fairness"})
    assert response.status_code == 200, response.text
    changes = {j["id"]: j["change"] for j in response.json()["jobs"]}
    assert changes["a"] == "removed" and changes["d"] == "added"


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"patch": {"gpus": {"v100": -2}}}, ["body", "patch", "gpus", "v100"]),
        ({"patch": {"weights": {"nobody": 2.0}}}, ["body", "patch", "weights", "nobody"]),
        ({"patch": {"gpus": {"v100": "1"}}}, ["body", "patch", "gpus", "v100"]),
        ({"after": {"gpu_types": [], "jobs": [{"id": 1}]}}, ["body", "after", "jobs", 0, "id"]),
        ({"patch": {}, "after": BEFORE}, ["body", "after"]),
        ({"patch": {}, "options": {"explain": "yes"}}, ["body", "options", "explain"]),
        ({"patch": {}, "surprise": 1}, ["body", "surprise"]),
    ],
)
def test_each_bad_input_gives_a_422_naming_its_field(
    change: dict[str, Any], loc: list[str | int]
) -> None:
    response = _post({"before": BEFORE, **change})
    assert response.status_code == 422, response.text
    assert loc in [e["loc"] for e in response.json()["errors"]]


def test_malformed_json_is_a_400() -> None:
    response = client.post(
        "/v1/compare", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400


def test_solve_with_explain_returns_the_explanation() -> None:
    response = client.post("/v1/solve", json={"snapshot": BEFORE, "options": {"explain": True}})
    assert response.status_code == 200, response.text
    explanation = response.json()["explanation"]
    assert explanation["available"]
    assert {j["id"]: j["code"] for j in explanation["jobs"]}["c"] == "full_time"
    plain = client.post("/v1/solve", json={"snapshot": BEFORE}).json()
    assert "explanation" not in plain


def _without_allocation(result: SolveResult) -> SolveResult:
    """`result` as a solve stopped at its time limit before finding any allocation returns it:
    no objective, every job with an empty allocation."""
    jobs = [dataclasses.replace(job, allocation={}) for job in result.jobs]
    update = {"status": Status.NO_SOLUTION, "termination": Termination.TIME_LIMIT}
    return result.model_copy(update={**update, "objective": None, "jobs": jobs})


def test_a_side_without_an_allocation_gives_no_differences_and_says_so() -> None:
    solved = solve(BEFORE, policy="max_min_fairness")
    assert solved.status is Status.OPTIMAL
    for before, after, side in [
        (_without_allocation(solved), solved, "before"),
        (solved, _without_allocation(solved), "after"),
    ]:
        answer = difference(before, after)
        # Against an empty allocation every job would look changed: nothing is compared.
        assert answer.jobs == [] and answer.unchanged == 0 and answer.gpu_types == []
        assert answer.objective_delta is None
        (warning,) = answer.warnings
        assert f"`{side}` side ended no_solution (solver: time_limit)" in warning
        assert "no per-job differences" in warning
    both = difference(solved, solved)
    assert both.warnings == [] and both.unchanged == 3 and both.jobs == []


def test_a_compare_stopped_at_its_time_limit_warns_of_each_side() -> None:
    body = orjson.loads(long_placement())
    # Nothing proves this placement optimal within a minute: each side stops at the limit.
    body["options"]["time_limit"] = 1
    request = {"before": body["snapshot"], "patch": {}, "policy": body["policy"]}
    response = _post({**request, "options": body["options"]})
    assert response.status_code == 200, response.text
    answer = response.json()
    warned = " ".join(answer["warnings"])
    for side in ("before", "after"):
        status = answer[f"status_{side}"]
        assert status != "optimal"
        assert f"`{side}` side ended {status}" in warned
        if status not in ("feasible", "fallback"):
            assert answer["jobs"] == [] and answer["unchanged"] == 0
