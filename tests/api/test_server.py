"""The service as a user starts it: uvicorn in a subprocess on 127.0.0.1, called over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.service import running_service


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
