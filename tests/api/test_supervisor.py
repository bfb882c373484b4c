"""The solver processes on the real server in a subprocess: any of them may die, idle or busy,
and the service heals; what a worker starts (PuLP's CBC) and writes ends with it; a worker
does not stay large after a large solve."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from apportion.refdata.synthetic import gavel_snapshot
from tests.api.service import (
    PROBE,
    Service,
    alive,
    busy_worker,
    long_placement,
    no_core_dumps,
    open_request,
    post_in_background,
    processes_mentioning,
    resident_bytes,
    running_service,
)

WORKERS = 2


@pytest.fixture(scope="module")
def two_workers() -> Iterator[Service]:
    with running_service(
        workers=str(WORKERS), queue_size="4", stop_grace_seconds="2", preexec_fn=no_core_dumps
    ) as service:
        yield service


def _ready(service: Service) -> httpx.Response:
    return httpx.get(f"{service.base}/readyz", timeout=10)


def _until_readiness(service: Service, status: int, seconds: float = 90) -> dict[str, Any]:
    """Poll /readyz until it answers `status`; its body then."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        response = _ready(service)
        if response.status_code == status:
            body: dict[str, Any] = response.json()
            return body
        time.sleep(0.01)
    raise AssertionError(f"/readyz never answered {status}")


def _probe_answered(service: Service) -> None:
    """A request right after a death: solved by a live worker, or refused as a problem."""
    response = httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=120)
    if response.status_code == 503:
        assert response.headers["content-type"] == "application/problem+json"
        assert int(response.headers["retry-after"]) >= 1
        return
    assert response.status_code == 200, response.text
    body = response.json()
    # One GPU, one job: the job gets all of it.
    assert body["status"] == "optimal" and body["jobs"][0]["allocation"] == {"g": 1.0}


def _kill_idle(service: Service, how: signal.Signals) -> None:
    victim = service.solvers()[0]
    os.kill(victim, how)
    recovering = _until_readiness(service, 503)
    assert recovering["status"] == "recovering" and recovering["workers_ready"] < WORKERS
    for _ in range(3):
        _probe_answered(service)


def _kill_busy(service: Service, how: signal.Signals) -> None:
    doomed = post_in_background(service, long_placement(), timeout=120)
    os.kill(busy_worker(service), how)
    doomed["thread"].join(timeout=60)
    response = doomed["response"]
    assert response.headers["content-type"] == "application/problem+json"
    if how in (signal.SIGKILL, signal.SIGTERM):  # stopped from outside: retry
        assert response.status_code == 503, response.text
        assert int(response.headers["retry-after"]) >= 1
        assert "stopped from outside" in response.json()["detail"]
    else:  # the solver's own failure
        assert response.status_code == 500, response.text
        assert "ended abnormally" in response.json()["detail"]
    assert _until_readiness(service, 503)["status"] == "recovering"
    _probe_answered(service)


def test_twenty_worker_deaths_in_a_row_cost_only_the_requests_they_ran(
    two_workers: Service,
) -> None:
    kills = [(_kill_idle, signal.SIGKILL), (_kill_idle, signal.SIGTERM)]
    kills += [(_kill_busy, signal.SIGKILL), (_kill_busy, signal.SIGTERM)]
    kills += [(_kill_busy, signal.SIGSEGV)]
    for round_ in range(20):
        kill, how = kills[round_ % len(kills)]
        before = set(two_workers.solvers())
        kill(two_workers, how)
        ready = _until_readiness(two_workers, 200)
        assert ready["workers_ready"] == WORKERS
        after = set(two_workers.solvers())
        assert len(after) == WORKERS and len(before - after) == 1, (before, after)
        _probe_answered(two_workers)


def test_every_worker_killed_at_once_is_replaced(two_workers: Service) -> None:
    for pid in two_workers.solvers():
        os.kill(pid, signal.SIGKILL)
    # Arriving while no worker is alive: it waits for a replacement (or is refused as a problem).
    _probe_answered(two_workers)
    assert _until_readiness(two_workers, 200)["workers_ready"] == WORKERS


def test_a_worker_does_not_stay_large_after_a_large_solve() -> None:
    body = orjson.dumps({"policy": "max_min_fairness", "snapshot": gavel_snapshot(200_000, seed=0)})
    ceiling = 150 * 2**20
    with running_service(workers="1", worker_max_rss_bytes=str(ceiling)) as service:
        response = httpx.post(
            f"{service.base}/v1/solve",
            content=body,
            headers={"content-type": "application/json"},
            timeout=300,
        )
        assert response.status_code == 200 and len(response.json()["jobs"]) == 200_000
        _until_readiness(service, 200)
        (worker,) = service.solvers()
        assert resident_bytes(worker) <= ceiling


def test_a_worker_over_its_memory_ceiling_is_replaced_after_its_request() -> None:
    with running_service(workers="1", worker_max_rss_bytes="0") as service:
        seen = set()
        for _ in range(3):
            _until_readiness(service, 200)
            (worker,) = service.solvers()
            seen.add(worker)
            _probe_answered(service)
        assert len(seen) == 3  # a fresh process for each request


@pytest.fixture
def pulp_service(tmp_path: Path) -> Iterator[tuple[Service, Path]]:
    """A service whose temporary files (PuLP's model and solution files) go to `tmp_path`."""
    with running_service(
        workers="1", stop_grace_seconds="0", env={"TMPDIR": str(tmp_path)}
    ) as service:
        yield service, tmp_path


def _pulp_placement(time_limit: float) -> bytes:
    body = orjson.loads(long_placement())
    body["options"] = {"time_limit": time_limit, "backend": "pulp"}
    return orjson.dumps(body)


def _cbc_of(folder: Path, seconds: float = 60) -> list[int]:
    """The CBC processes reading a model file in `folder`, once there is one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = [p for p in processes_mentioning(str(folder)) if "cbc" in _exe(p)]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("CBC did not start")


def _exe(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return ""


def _files_in(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_a_client_that_leaves_takes_cbc_and_its_files_with_it(
    pulp_service: tuple[Service, Path],
) -> None:
    service, folder = pulp_service
    with open_request(service, "/v1/solve", _pulp_placement(60)):
        cbc = _cbc_of(folder)
        assert any(p.suffix == ".mps" for p in _files_in(folder))
    # The client has left; its solve is stopped within half a second, CBC with it.
    time.sleep(2)
    assert [p for p in cbc if alive(p)] == []
    assert processes_mentioning(str(folder)) == []
    _until_readiness(service, 200)
    assert _files_in(folder) == []


def test_a_solve_stopped_at_its_limit_leaves_no_cbc_and_no_files(
    pulp_service: tuple[Service, Path],
) -> None:
    service, folder = pulp_service
    response = httpx.post(
        f"{service.base}/v1/solve",
        content=_pulp_placement(3),
        headers={"content-type": "application/json"},
        timeout=120,
    )
    # CBC ends at its limit, or the alarm ends the worker (and CBC with its process group).
    assert response.status_code in (200, 504), response.text
    if response.status_code == 504:
        assert response.headers["content-type"] == "application/problem+json"
    _until_readiness(service, 200)
    assert processes_mentioning(str(folder)) == []
    assert _files_in(folder) == []
