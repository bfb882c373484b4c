"""What a request may make the service hold or echo, checked on the real server in a subprocess
(`python -m apportion.api`): a bounded head (431 beyond), a bounded and safe request id, and a
bounded list of bad fields however many there are."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.api.service import PROBE, Service, resident_bytes, running_service

MAX_HEADER_BYTES = 8192


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Path]]:
    log = tmp_path_factory.mktemp("bounds") / "service.log"
    with (
        log.open("wb") as stderr,
        running_service(
            main=True, stderr=stderr, workers="1", max_header_bytes=str(MAX_HEADER_BYTES)
        ) as running,
    ):
        yield running, log


def _connect(service: Service) -> socket.socket:
    host, port = service.base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _answer(connection: socket.socket) -> bytes:
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    return data


def _solves(service: Service) -> bool:
    response = httpx.post(f"{service.base}/v1/solve", json=PROBE, timeout=60)
    return response.status_code == 200 and response.json()["status"] == "optimal"


def test_headers_beyond_the_limit_are_a_431_problem(service: tuple[Service, Path]) -> None:
    running, _ = service
    head = b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 * MAX_HEADER_BYTES)
    with _connect(running) as connection:
        connection.sendall(head)  # the head never ends: the limit, not the parser, refuses it
        answer = _answer(connection)
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large", answer[:200]
    assert b"content-type: application/problem+json" in rest
    problem = orjson.loads(rest.partition(b"\r\n\r\n")[2])
    assert problem["status"] == 431 and str(MAX_HEADER_BYTES) in problem["detail"]
    assert _solves(running)


def test_headers_within_the_limit_are_served(service: tuple[Service, Path]) -> None:
    running, _ = service
    headers = {"X-Padding": "p" * (MAX_HEADER_BYTES // 2)}
    response = httpx.post(f"{running.base}/v1/solve", json=PROBE, headers=headers, timeout=60)
    assert response.status_code == 200


def test_a_20_mb_header_is_not_taken_in(service: tuple[Service, Path]) -> None:
    running, _ = service
    before = resident_bytes(running.process.pid)
    with _connect(running) as connection:
        connection.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Big: ")
        sent = 0
        with pytest.raises(OSError):  # the server closes the connection long before the end
            while sent < 20 * 2**20:
                connection.sendall(b"a" * 2**16)
                sent += 2**16
    assert sent < 20 * 2**20
    # Held at most the limit and one read more, never the 20 MB.
    assert resident_bytes(running.process.pid) - before < 8 * 2**20
    assert _solves(running)


@pytest.mark.parametrize(
    "given", ["x" * 10_000, "a b", "<script>", "ü-id", "id\twith-tab", '"quoted"', ""]
)
def test_an_unsafe_request_id_is_replaced(service: tuple[Service, Path], given: str) -> None:
    running, log = service
    response = httpx.post(
        f"{running.base}/v1/solve",
        json=PROBE,
        headers={b"X-Request-ID": given.encode()},
        timeout=60,
    )
    assert response.status_code == 200
    replaced = response.headers["x-request-id"]
    assert replaced != given and len(replaced) == 32 and int(replaced, 16) >= 0
    if given.isascii() and given:
        assert given[:100] not in log.read_text(errors="replace")


def test_a_safe_request_id_is_echoed(service: tuple[Service, Path]) -> None:
    running, log = service
    given = "scheduler-7f3a:round/12+retry=1"
    response = httpx.post(
        f"{running.base}/v1/solve", json=PROBE, headers={"X-Request-ID": given}, timeout=60
    )
    assert response.headers["x-request-id"] == given
    assert given in log.read_text(errors="replace")


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_200000_duplicate_ids_are_refused_with_a_short_list(
    service: tuple[Service, Path], layout: str
) -> None:
    running, _ = service
    n = 200_000
    if layout == "rows":
        jobs: object = [{"id": "same", "throughput": {"g": 1}} for _ in range(n)]
    else:
        jobs = {"id": ["same"] * n, "throughput": {"g": [1] * n}}
    body = orjson.dumps({"snapshot": {"gpu_types": [{"name": "g", "count": 1}], "jobs": jobs}})
    response = httpx.post(
        f"{running.base}/v1/solve",
        content=body,
        headers={"content-type": "application/json"},
        timeout=120,
    )
    assert response.status_code == 422
    problem = response.json()
    errors = problem["errors"]
    # Rows 1, 2, ... repeat row 0's id: the first ones named, the rest counted.
    assert errors[0]["loc"][-2:] == ([1, "id"] if layout == "rows" else ["id", 1])
    assert all(e["type"] == "duplicate" for e in errors)
    assert f"{n - 1 - (len(errors) - 1)} more duplicates" in errors[-1]["msg"]
    assert len(response.content) < 10_000


def test_a_problem_lists_at_most_100_bad_fields_and_counts_the_rest(
    service: tuple[Service, Path],
) -> None:
    running, _ = service
    jobs = [{"id": f"j{i}", "throughput": {"g": 1}, "weight": -1} for i in range(300)]
    snapshot = {"gpu_types": [{"name": "g", "count": 1}], "jobs": jobs}
    response = httpx.post(f"{running.base}/v1/solve", json={"snapshot": snapshot}, timeout=60)
    assert response.status_code == 422
    problem = response.json()
    assert len(problem["errors"]) == 100 and problem["errors_omitted"] == 200
    assert problem["errors"][0]["loc"] == ["body", "snapshot", "jobs", 0, "weight"]
    assert "(and 299 more)" in problem["detail"]
