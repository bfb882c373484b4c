"""The service as a user starts it: uvicorn in a subprocess on 127.0.0.1, called over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.service import running_service
from tests.formulations.objectives.test_min_cost_slo import NO_DEADLINES


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_service() as service:
        yield service.base


def test_post_fixture_over_http(server: str, gavel_physical: dict[str, Any]) -> None:
    response = httpx.post(f"{server}/v1/solve", json={"snapshot": gavel_physical}, timeout=60)
    assert response.status_code == 200
    assert response.json()["status"] == "optimal"
    assert httpx.get(f"{server}/readyz", timeout=10).json()["status"] == "ok"


def test_invalid_snapshot_over_http_is_422(server: str) -> None:
    response = httpx.post(f"{server}/v1/solve", json={"snapshot": {"gpu_types": []}}, timeout=10)
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["body", "snapshot", "gpu_types"]


def test_min_cost_slo_without_any_deadline_is_422_over_http(server: str) -> None:
    response = httpx.post(
        f"{server}/v1/solve",
        json={"policy": "min_cost_slo", "snapshot": NO_DEADLINES},
        timeout=30,
    )
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    (error,) = response.json()["errors"]
    assert error["loc"] == ["body", "snapshot", "jobs"]
    assert "no job has a deadline" in error["msg"]
