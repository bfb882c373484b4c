"""The objective policies through the HTTP API and the CLI: listed, selectable, errors as 422/2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from apportion.api.main import app
from tests.cli_runner import invoke
from tests.conformance.cases_objectives import MAKESPAN, SLO_OVERSUBSCRIBED
from tests.formulations.objectives.test_min_cost_slo import NO_DEADLINES

NEW = {
    "makespan": {
        "pareto",
        "heterogeneity_aware",
        "agnostic_definition",
        "reference_type",
        "uncertainty",
    },
    "finish_time_fairness": {"isolated_share", "pareto"},
    "max_total_throughput": {"normalized"},
    "throughput_per_dollar": {"gang_price"},
    "min_cost_slo": {"maximize"},
    "fifo": {"mode"},
}

client = TestClient(app)


def test_policies_are_listed_with_their_options() -> None:
    listed = {p["name"]: p for p in client.get("/v1/policies").json()["policies"]}
    for name, options in NEW.items():
        assert name in listed
        assert set(listed[name]["options"].get("properties", {})) == options
    assert listed["min_cost_slo"]["problem_class"] == "MILP"
    assert listed["fifo"]["options"]["properties"]["mode"]["enum"] == [
        "strict",
        "backfill",
        "gavel",
    ]


def test_solve_by_name_over_http() -> None:
    response = client.post(
        "/v1/solve", json={"policy": "min_cost_slo", "snapshot": SLO_OVERSUBSCRIBED}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "optimal"
    assert body["objective"] == pytest.approx(1.0)
    assert body["summary"]["slo_missed"] == ["c"]
    missed = next(j for j in body["jobs"] if j["id"] == "c")
    assert missed["metrics"]["slo_met"] is False


def test_policy_input_errors_are_422_with_the_field() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [{"id": "a", "throughput": {"v100": 1}}],
    }
    response = client.post("/v1/solve", json={"policy": "makespan", "snapshot": snapshot})
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["body", "snapshot", "jobs", 0, "steps_remaining"]


def test_a_backend_without_milp_is_refused_for_the_slo_policy() -> None:
    response = client.post(
        "/v1/solve",
        json={
            "policy": "min_cost_slo",
            "snapshot": SLO_OVERSUBSCRIBED,
            "options": {"backend": "clarabel"},
        },
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["body", "options", "backend"]


def test_cli_solves_by_policy_name(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(MAKESPAN))
    result = invoke([str(path), "--policy", "makespan", "--format", "json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["objective"] == pytest.approx(15 / 7)
    assert body["jobs"][0]["metrics"]["finish_time"] == pytest.approx(15 / 7)


def test_cli_table_shows_policy_metrics(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(MAKESPAN))
    result = invoke([str(path), "--policy", "makespan", "--format", "table"])
    assert result.exit_code == 0, result.output
    assert "finish_time" in result.output


def test_min_cost_slo_without_any_deadline_is_refused_by_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(NO_DEADLINES))
    result = invoke([str(path), "--policy", "min_cost_slo"])
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "snapshot.jobs" in line and "no job has a deadline" in line
