"""Stopping the real server in a subprocess: every request still gets an answer (a result or a
problem document, never a bare 500 or a traceback), no work goes on after it, and nothing
runs longer than one solve's bound (a compare included)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from tests.api.service import (
    alive,
    busy_worker,
    long_placement,
    post_in_background,
    processes_mentioning,
    running_service,
)


def _placement(time_limit: float, **options: Any) -> bytes:
    body = orjson.loads(long_placement())
    body["options"] = {"time_limit": time_limit, **options}
    return orjson.dumps(body)


def _problem(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    detail: str = response.json()["detail"]
    return detail


def _gone(pids: list[int]) -> bool:
    return not any(alive(pid) for pid in pids)


def _clean(log: Path) -> None:
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-3000:]


def test_sigterm_answers_waiting_requests_at_once_and_lets_the_running_one_end(
    tmp_path: Path,
) -> None:
    log = tmp_path / "service.log"
    with (
        log.open("wb") as stderr,
        running_service(
            main=True,
            stderr=stderr,
            workers="1",
            queue_size="3",
            max_time_limit="5",
            stop_grace_seconds="1",
        ) as service,
    ):
        running = post_in_background(service, _placement(5), timeout=60)
        busy_worker(service)
        waiting = [post_in_background(service, _placement(5), timeout=60) for _ in range(3)]
        deadline = time.monotonic() + 30
        while httpx.get(f"{service.base}/readyz", timeout=5).json()["queued"] < 3:
            assert time.monotonic() < deadline, "the requests did not queue"
            time.sleep(0.05)
        workers = service.solvers()
        service.process.send_signal(signal.SIGTERM)
        for request in waiting:
            request["thread"].join(timeout=60)
            assert "shutting down" in _problem(request["response"], 503)
            assert int(request["response"].headers["retry-after"]) >= 1
        running["thread"].join(timeout=60)
        assert running["response"].status_code in (200, 504), running["response"].text
        assert service.process.wait(timeout=60) in (0, -signal.SIGTERM)
        assert _gone(workers)
    _clean(log)


def test_a_request_the_server_stops_waiting_for_is_answered_and_its_cbc_ended(
    tmp_path: Path,
) -> None:
    log = tmp_path / "service.log"
    with (
        log.open("wb") as stderr,
        running_service(
            args=["--timeout-graceful-shutdown", "1"],
            env={"TMPDIR": str(tmp_path)},
            stderr=stderr,
            workers="1",
        ) as service,
    ):
        running = post_in_background(service, _placement(60, backend="pulp"), timeout=120)
        deadline = time.monotonic() + 60
        while not any(p.suffix == ".mps" for p in tmp_path.rglob("*")):
            assert time.monotonic() < deadline, "CBC did not start"
            time.sleep(0.1)
        workers = service.solvers()
        service.process.send_signal(signal.SIGTERM)
        running["thread"].join(timeout=60)
        # Past the server's 1 s bound: a problem document, the solve ended with it.
        assert "stopped before" in _problem(running["response"], 503)
        assert service.process.wait(timeout=60) in (0, -signal.SIGTERM)
        assert _gone(workers)
    assert processes_mentioning(str(tmp_path)) == []
    assert [p for p in tmp_path.rglob("*") if p.is_file() and p != log] == []
    _clean(log)


def test_a_compare_is_bounded_like_one_solve() -> None:
    # Neither side can be proven optimal within a minute, so each would use its whole limit:
    # the two together get one limit, and the alarm one limit plus the grace.
    snapshot = orjson.loads(long_placement())["snapshot"]
    body = {
        "policy": "contention_placement",
        "before": snapshot,
        "patch": {},
        "options": {"time_limit": 3},
    }
    with running_service(workers="1", stop_grace_seconds="0") as service:
        started = time.monotonic()
        response = httpx.post(f"{service.base}/v1/compare", json=body, timeout=60)
        took = time.monotonic() - started
    assert response.status_code in (200, 504), response.text
    if response.status_code == 200:
        assert response.json()["status_after"] != "optimal"  # it had what the first side left
    else:
        assert response.headers["content-type"] == "application/problem+json"
    assert took < 2 * 3  # two full limits is what a compare took before it was bounded
