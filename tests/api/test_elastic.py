"""The elastic family through a real service (uvicorn in a subprocess) and the CLI: listed with
typed options, solved by name, bad input answered 422 / exit 2 naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.api.service import running_service
from tests.cli_runner import invoke
from tests.conformance.cases_elastic import TWO_TYPES

POLICIES = {
    "sia": {"p", "lambda_n", "restart_factor", "presolve", "round_decimals"},
    "ones": {"presolve"},
    "elastic_max_min": {"pareto", "restart_factor", "presolve"},
    "elastic_max_goodput": {"restart_factor", "presolve"},
}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_service() as service:
        yield service.base


def test_listed_with_their_options_and_typed_in_openapi(server: str) -> None:
    listed = {p["name"]: p for p in httpx.get(f"{server}/v1/policies").json()["policies"]}
    for name, options in POLICIES.items():
        assert set(listed[name]["options"]["properties"]) == options
    document = httpx.get(f"{server}/openapi.json").json()
    schemas = document["components"]["schemas"]
    sia = schemas["SiaOptions"]["properties"]
    assert sia["p"]["type"] == "number" and sia["presolve"]["enum"] == ["auto", "on", "off"]
    elastic = schemas["Elastic"]["properties"]
    assert {"configurations", "model", "current", "pinned", "remaining"} <= set(elastic)


def test_solved_over_http(server: str) -> None:
    body = {"policy": "sia", "snapshot": TWO_TYPES, "options": {"explain": True}}
    response = httpx.post(f"{server}/v1/solve", json=body, timeout=60)
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "optimal"
    assert answer["objective"] == pytest.approx(3.5**-0.5 + 1.9**-0.5 + 1)
    assert [j["metrics"]["configuration"] for j in answer["jobs"]] == [4, 1, 0]
    assert answer["explanation"]["price_stage"] == "one more GPU"


def test_bad_input_is_422_naming_the_field(server: str) -> None:
    body = {"policy": "ones", "snapshot": TWO_TYPES, "options": {"p": -1}}
    response = httpx.post(f"{server}/v1/solve", json=body, timeout=60)
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["body", "options", "p"]
    wrong = json.loads(json.dumps(TWO_TYPES))
    wrong["jobs"][0]["elastic"]["configurations"][0]["gpu_type"] = "c"
    response = httpx.post(f"{server}/v1/solve", json={"policy": "sia", "snapshot": wrong})
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == [
        "body", "snapshot", "jobs", 0, "elastic", "configurations", 0, "gpu_type",
    ]  # fmt: skip


def test_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "elastic.json"
    path.write_text(json.dumps(TWO_TYPES))
    ran = invoke([str(path), "--policy", "elastic_max_goodput", "--format", "json"])
    assert ran.exit_code == 0, ran.stderr
    assert json.loads(ran.stdout)["objective"] == pytest.approx(6.4)
    ran = invoke([str(path), "--policy", "sia", "-o", "p=0"])
    assert ran.exit_code == 2
    assert "options.p" in ran.stderr
