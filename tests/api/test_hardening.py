"""A service a scheduler can depend on, checked on the real server in a subprocess: a dying
solver process costs one request, a client that leaves stops its solve, overload answers 503,
health never waits behind solves, and SIGTERM drains."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest

from tests.api.service import (
    PROBE,
    Service,
    busy_worker,
    cpu_seconds,
    long_placement,
    no_core_dumps,
    post_in_background,
    running_service,
)


@pytest.fixture(scope="module")
def one_worker() -> Iterator[Service]:
    with running_service(
        workers="1", queue_size="0", stop_grace_seconds="2", preexec_fn=no_core_dumps
    ) as service:
        yield service


def _answers_probe(service: Service) -> bool:
    response = httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60)
    return response.status_code == 200 and response.json()["status"] == "optimal"


def test_overload_is_a_503_with_retry_after_and_health_does_not_wait(
    one_worker: Service,
) -> None:
    running = post_in_background(one_worker, long_placement(), timeout=60)
    busy_worker(one_worker)
    refused = httpx.post(f"{one_worker.base}/v1/solve", json=PROBE, timeout=10)
    assert refused.status_code == 503
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.headers["content-type"] == "application/problem+json"
    ready = httpx.get(f"{one_worker.base}/readyz", timeout=10)
    assert ready.status_code == 503 and ready.json()["status"] == "saturated"
    waits = []
    for _ in range(20):
        started = time.perf_counter()
        assert httpx.get(f"{one_worker.base}/livez", timeout=5).status_code == 200
        waits.append(time.perf_counter() - started)
    # The only worker is busy for 30 s: /livez does not wait behind it (its latency target is a
    # benchmark row, not a timed test).
    assert max(waits) < 1.0
    running["thread"].join(timeout=60)
    assert running["response"].status_code == 200
    assert running["response"].json()["status"] in ("feasible", "fallback", "optimal")


def test_a_client_that_leaves_stops_its_solve_within_a_second(one_worker: Service) -> None:
    leaving = post_in_background(one_worker, long_placement(), timeout=3)
    worker = busy_worker(one_worker)
    leaving["thread"].join(timeout=10)
    assert "error" in leaving  # the client gave up after 3 s
    left = time.monotonic()
    time.sleep(1.0)
    spent = cpu_seconds([worker])
    time.sleep(1.0)
    assert cpu_seconds([worker]) - spent < 0.1, "the solve went on after its client left"
    assert time.monotonic() - left < 3
    assert _answers_probe(one_worker)


def test_a_solver_process_that_dies_costs_one_request(one_worker: Service) -> None:
    doomed = post_in_background(one_worker, long_placement(), timeout=60)
    worker = busy_worker(one_worker)
    os.kill(worker, signal.SIGSEGV)  # what a fault inside a solver's native code does
    doomed["thread"].join(timeout=30)
    response = doomed["response"]
    assert response.status_code == 500
    assert "ended abnormally" in response.json()["detail"]
    assert _answers_probe(one_worker)  # a fresh process took its place


def test_a_solver_process_killed_from_outside_is_a_503_to_retry(one_worker: Service) -> None:
    doomed = post_in_background(one_worker, long_placement(), timeout=60)
    os.kill(busy_worker(one_worker), signal.SIGKILL)  # an operator, or the OOM killer
    doomed["thread"].join(timeout=30)
    response = doomed["response"]
    assert response.status_code == 503, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert int(response.headers["retry-after"]) >= 1
    assert "stopped from outside (SIGKILL)" in response.json()["detail"]
    assert _answers_probe(one_worker)


def test_a_solve_past_its_limit_has_its_process_ended() -> None:
    body = orjson.loads(long_placement())
    body["options"]["time_limit"] = 1
    with running_service(workers="1", stop_grace_seconds="0") as service:
        started = time.perf_counter()
        response = httpx.post(f"{service.base}/v1/solve", json=body, timeout=60)
        took = time.perf_counter() - started
        # Either the placement search honoured its 1 s, or the alarm ended it at 1 s + 0 s.
        assert response.status_code in (200, 504), response.text
        assert took < 5
        if response.status_code == 504:
            assert response.json()["title"] == "Solve stopped at its time limit"
        assert _answers_probe(service)


def test_sigterm_lets_running_solves_finish_then_exits() -> None:
    body = orjson.loads(long_placement())
    body["options"]["time_limit"] = 2
    with running_service(workers="1", stop_grace_seconds="2") as service:
        running = post_in_background(service, orjson.dumps(body), timeout=60)
        busy_worker(service)
        service.process.send_signal(signal.SIGTERM)
        running["thread"].join(timeout=30)
        assert running["response"].status_code in (200, 504)
        # uvicorn re-raises the signal once it has drained, so the exit is SIGTERM's own.
        assert service.process.wait(timeout=15) in (0, -signal.SIGTERM)
