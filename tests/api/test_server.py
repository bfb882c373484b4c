"""The service as a user starts it: uvicorn in a subprocess on 127.0.0.1, called over HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "api.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/livez", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("the service did not start within 60 s")
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_post_fixture_over_http(server: str, gavel_physical: dict[str, Any]) -> None:
    response = httpx.post(f"{server}/v1/solve", json={"snapshot": gavel_physical}, timeout=60)
    assert response.status_code == 200
    assert response.json()["status"] == "optimal"
    assert httpx.get(f"{server}/readyz", timeout=10).json()["status"] == "ok"


def test_invalid_snapshot_over_http_is_422(server: str) -> None:
    response = httpx.post(f"{server}/v1/solve", json={"snapshot": {"gpu_types": []}}, timeout=10)
    assert response.status_code == 422
    assert response.json()["errors"][0]["loc"] == ["body", "snapshot", "gpu_types"]
