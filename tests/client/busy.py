"""Keeping the test service's only solver busy, and transports that record when each attempt
was sent (real httpx transports, wrapped; nothing is mocked)."""

from __future__ import annotations

import itertools
import threading
import time
from functools import cache
from typing import Any

import httpx
import orjson

from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from tests.api.service import PROBE, Service

BUSY_SECONDS = 3
PROBE_SNAPSHOT: dict[str, Any] = PROBE["snapshot"]


@cache
def long_placement() -> bytes:
    """A contention placement nothing proves within a minute: it holds a solver for exactly
    its time limit."""
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    snapshot = trace_snapshot(trace, nodes=64, running=70, candidates=100, seed=0)
    snapshot["contention"] = read_contention_csv(
        SOURCE / "deepshare_shared_thp_ratio.csv"
    ).model_dump()
    body = {"policy": "contention_placement", "snapshot": snapshot}
    return orjson.dumps({**body, "options": {"time_limit": BUSY_SECONDS}})


def occupy(service: Service) -> threading.Thread:
    """Start the long solve in a thread and return once the service says it is saturated."""

    def run() -> None:
        httpx.post(
            f"{service.base}/v1/solve",
            content=long_placement(),
            headers={"content-type": "application/json"},
            timeout=60,
        )

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{service.base}/readyz", timeout=5).status_code == 503:
            return thread
        time.sleep(0.05)
    raise AssertionError("the service never became saturated")


class Recording(httpx.HTTPTransport):
    """The default transport, noting the time and answer status of every attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[tuple[float, int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.attempts.append((time.monotonic(), response.status_code))
        return response


class AsyncRecording(httpx.AsyncHTTPTransport):
    """`Recording` for the async client."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[tuple[float, int]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        self.attempts.append((time.monotonic(), response.status_code))
        return response


def gaps(attempts: list[tuple[float, int]]) -> list[float]:
    times = [t for t, _ in attempts]
    return [b - a for a, b in itertools.pairwise(times)]
