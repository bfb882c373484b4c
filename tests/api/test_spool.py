"""Request bodies on the real server in a subprocess: admitted before they are read, within an
upload budget, and never left behind in the spool, however their request ends."""

from __future__ import annotations

import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.api.service import (
    PROBE,
    Service,
    alive,
    busy_worker,
    long_placement,
    open_request,
    post_in_background,
    running_service,
)

MB = 10**6
UPLOAD = 50 * MB


def _spooled_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _request_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("apportion-request-*") if p.is_file()]


def _until(condition: Any, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("the condition never held")


def _answer(connection: socket.socket) -> tuple[int, dict[str, str], dict[str, Any]]:
    """The status, headers and JSON body of the response on a raw connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        assert chunk, "the server closed the connection without an answer"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    while len(rest) < int(headers["content-length"]):
        rest += connection.recv(65536)
    return int(lines[0].split()[1]), headers, orjson.loads(rest)


def _refused(status: int, headers: dict[str, str], body: dict[str, Any]) -> str:
    assert status == 503 and headers["content-type"] == "application/problem+json"
    assert int(headers["retry-after"]) >= 1
    detail: str = body["detail"]
    return detail


@pytest.fixture(scope="module")
def spool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spool")


@pytest.fixture(scope="module")
def service(spool: Path) -> Iterator[Service]:
    with running_service(
        workers="1",
        queue_size="8",
        spool_dir=str(spool),
        max_body_bytes=str(64 * MB),
        upload_budget_bytes=str(120 * MB),
    ) as running:
        yield running


def test_eight_aborted_uploads_leave_nothing_behind(service: Service, spool: Path) -> None:
    body = b" " * UPLOAD
    for _ in range(8):
        with open_request(service, "/v1/solve", body, send=30 * MB):
            _until(lambda: _spooled_bytes(spool) >= 30 * MB)
        # The client left mid-upload: its spool file goes.
        _until(lambda: _spooled_bytes(spool) == 0)
    assert _request_files(spool) == []
    assert httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60).status_code == 200


def test_uploads_beyond_the_budget_are_refused_before_they_are_read(
    service: Service, spool: Path
) -> None:
    body = b" " * UPLOAD
    # Two 50 MB uploads in progress hold 100 of the 120 MB budget: a third is refused as it
    # arrives, with nothing of it read.
    with (
        open_request(service, "/v1/solve", body, send=MB),
        open_request(service, "/v1/solve", body, send=MB),
    ):
        _until(lambda: len(_request_files(spool)) == 0 and _held(service) >= 2 * UPLOAD)
        with open_request(service, "/v1/solve", body, send=0) as third:
            detail = _refused(*_answer(third))
            assert "retry later" in detail
    _until(lambda: _held(service) == 0 and _spooled_bytes(spool) == 0)


def _held(service: Service) -> float:
    metrics = httpx.get(f"{service.base}/metrics", timeout=10).text
    line = next(x for x in metrics.splitlines() if x.startswith("apportion_body_bytes_held "))
    return float(line.split()[1])


def test_a_full_queue_refuses_a_body_before_reading_it() -> None:
    with running_service(workers="1", queue_size="0", stop_grace_seconds="2") as service:
        body = orjson.loads(long_placement())
        body["options"]["time_limit"] = 5
        running = post_in_background(service, orjson.dumps(body), timeout=120)
        busy_worker(service)
        with open_request(service, "/v1/solve", b" " * UPLOAD, send=0) as refused:
            detail = _refused(*_answer(refused))
            assert "queue is full" in detail
        running["thread"].join(timeout=120)
        assert running["response"].status_code in (200, 504)


def _small_files() -> None:
    """The service may write no file above 8 MB (as if its spool had that much room left)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (8 * MB, 8 * MB))


def test_a_spool_without_room_answers_a_problem_and_keeps_nothing(tmp_path: Path) -> None:
    with running_service(workers="1", spool_dir=str(tmp_path), preexec_fn=_small_files) as service:
        big = orjson.dumps({"snapshot": PROBE["snapshot"], "policy": "x" * (20 * MB)})
        response = httpx.post(
            f"{service.base}/v1/solve",
            content=big,
            headers={"content-type": "application/json"},
            timeout=60,
        )
        assert "no room in the spool" in _refused(
            response.status_code, dict(response.headers), response.json()
        )
        assert _spooled_bytes(tmp_path) == 0
        # A small body whose answer is too large for the room left: refused the same way.
        jobs = [{"id": f"j{i}", "throughput": {"g": 1}} for i in range(100_000)]
        snapshot = {"gpu_types": [{"name": "g", "count": 8}], "jobs": jobs}
        response = httpx.post(f"{service.base}/v1/solve", json={"snapshot": snapshot}, timeout=120)
        assert "no room in the spool for the answer" in _refused(
            response.status_code, dict(response.headers), response.json()
        )
        assert _spooled_bytes(tmp_path) == 0
        # Small bodies are still served.
        assert httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60).status_code == 200
    assert list(tmp_path.iterdir()) == []  # the service's spool folder went with it


def test_the_spool_folder_goes_with_the_service(tmp_path: Path) -> None:
    with running_service(workers="1", spool_dir=str(tmp_path)) as service:
        (folder,) = tmp_path.iterdir()
        assert folder.name.startswith(f"apportion-{service.process.pid}-")
    assert list(tmp_path.iterdir()) == []


def test_an_upload_that_stalls_is_a_408_and_leaves_nothing_behind(tmp_path: Path) -> None:
    with running_service(workers="1", spool_dir=str(tmp_path), body_timeout="2") as service:
        with open_request(service, "/v1/solve", b" " * UPLOAD, send=10 * MB) as stalled:
            status, headers, body = _answer(stalled)
        assert status == 408 and headers["content-type"] == "application/problem+json"
        assert "did not arrive within 2 s" in body["detail"]
        _until(lambda: _spooled_bytes(tmp_path) == 0)
        assert httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60).status_code == 200


def test_what_a_killed_service_leaves_goes_at_the_next_start(tmp_path: Path) -> None:
    with running_service(workers="1", spool_dir=str(tmp_path)) as killed:
        (left,) = tmp_path.iterdir()
        workers = killed.solvers()
        killed.process.kill()  # no cleanup of its own
        killed.process.wait()
        _until(lambda: not any(alive(pid) for pid in workers))
        assert left.is_dir()
    with running_service(workers="1", spool_dir=str(tmp_path)):
        assert left not in list(tmp_path.iterdir())
