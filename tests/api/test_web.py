"""What the service takes from the web, on the real server (`python -m apportion.api` in a
subprocess): JSON bodies only (no cross-site "simple request" starts a solve), a deadline for
request headers, solvers checked against what the backend offers, and an OpenAPI document that says
what the server refuses (the inputs a fuzzer found rejected while the schema allowed them)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest
from jsonschema import Draft202012Validator

from apportion.refdata import FIXTURES
from tests.api.service import PROBE, Service, running_service
from tests.client.busy import BUSY_SECONDS, long_placement

HEADER_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(
        main=True, workers="1", queue_size="4", header_timeout=str(HEADER_TIMEOUT)
    ) as running:
        yield running


def _problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


# ---- JSON bodies only ----------------------------------------------------------------------

# What a page on any site may send here without the browser asking the service first.
SIMPLE = ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded"]


@pytest.mark.parametrize("path", ["/v1/solve", "/v1/rounds", "/v1/compare"])
@pytest.mark.parametrize("media", [*SIMPLE, None])
def test_a_body_not_sent_as_json_is_a_415(service: Service, path: str, media: str | None) -> None:
    headers = {} if media is None else {"content-type": media}
    response = httpx.post(
        f"{service.base}{path}", content=orjson.dumps(PROBE), headers=headers, timeout=30
    )
    body = _problem(response, 415)
    assert "application/json" in body["detail"]
    assert response.headers["accept-post"] == "application/json"


def test_json_with_a_charset_is_solved(service: Service) -> None:
    response = httpx.post(
        f"{service.base}/v1/solve",
        content=orjson.dumps(PROBE),
        headers={"content-type": "application/json; charset=utf-8"},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "optimal"


# ---- a deadline for request headers ----------------------------------------------------------


def _trickle(service: Service, start: bytes) -> bytes:
    """Send `start`, then one header line every 0.3 s for up to 60 s; what the server sent
    back before it closed the connection (b"" if it never did)."""
    address = ("127.0.0.1", urlsplit(service.base).port)
    received = b""
    with socket.create_connection(address, timeout=60) as conn:
        conn.sendall(start)
        conn.settimeout(0.3)
        ends = time.monotonic() + 60
        while time.monotonic() < ends:
            try:
                conn.sendall(b"x-slow: 1\r\n")
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:  # reset: the server closed first
                break
            if not chunk:
                break
            received += chunk
    return received


def test_headers_that_never_end_get_a_408_and_the_connection_closed(service: Service) -> None:
    # Once: held open as long as the client kept sending (90 s seen).
    answer = _trickle(service, b"POST /v1/solve HTTP/1.1\r\nhost: x\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"application/problem+json" in head
    assert b"headers did not arrive within 2 s" in body


def test_a_connection_that_sends_nothing_is_closed_without_a_word(service: Service) -> None:
    # No answer: a client that kept the connection for a later request would read it as that
    # request's.
    address = ("127.0.0.1", urlsplit(service.base).port)
    with socket.create_connection(address, timeout=60) as conn:
        assert conn.recv(65536) == b""  # returns b"" once the server has closed


def test_a_kept_connection_idle_after_an_answer_is_closed_without_a_word(
    service: Service,
) -> None:
    address = ("127.0.0.1", urlsplit(service.base).port)
    with socket.create_connection(address, timeout=60) as conn:
        conn.sendall(b"GET /livez HTTP/1.1\r\nhost: x\r\n\r\n")
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200") and answer.count(b"HTTP/1.1") == 1


def test_a_solve_longer_than_the_header_deadline_is_answered(service: Service) -> None:
    # The deadline covers headers only: a request being answered is never cut short.
    assert BUSY_SECONDS > HEADER_TIMEOUT
    with httpx.Client(timeout=120) as client:  # one kept-alive connection for both
        response = client.post(
            f"{service.base}/v1/solve",
            content=long_placement(),
            headers={"content-type": "application/json"},
        )
        assert response.status_code == 200, response.text
        assert response.json()["summary"]["started"] > 0
        assert client.post(f"{service.base}/v1/solve", json=PROBE).status_code == 200


# ---- solvers the backend offers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "options", "named"),
    [
        # Once: a worker ended by a segmentation fault inside OSQP.
        ("max_min_fairness", {"backend": "cvxpy", "solver": "OSQP"}, "CLARABEL, HIGHS, SCS"),
        ("contention_placement", {"backend": "cvxpy", "solver": "SCS"}, "HIGHS or SCIPY"),
        ("contention_placement", {"backend": "highs", "solver": "pdlp"}, "cannot solve MILP"),
    ],
)
def test_a_solver_the_backend_does_not_offer_is_a_422(
    service: Service, policy: str, options: dict[str, str], named: str
) -> None:
    data = orjson.loads((FIXTURES / "deepshare_cluster.json").read_bytes())
    body = {"policy": policy, "snapshot": data, "options": options}
    response = httpx.post(f"{service.base}/v1/solve", json=body, timeout=60)
    (error,) = _problem(response, 422)["errors"]
    assert error["loc"] == ["body", "options", "solver"]
    assert named in error["msg"]


# ---- the OpenAPI document says what the server refuses ------------------------------------------

CLUSTER = {"gpu_types": [{"name": "g", "count": 1}], "jobs": [{"id": "j", "throughput": {"g": 1}}]}
EMPTY = {"gpu_types": [], "jobs": []}


@pytest.fixture(scope="module")
def validators(service: Service) -> dict[str, Draft202012Validator]:
    """JSON Schema validators of each POST body, from the served document."""
    document = httpx.get(f"{service.base}/openapi.json", timeout=30).json()
    out = {}
    for path, methods in document["paths"].items():
        if "post" in methods:
            schema = methods["post"]["requestBody"]["content"]["application/json"]["schema"]
            out[path] = Draft202012Validator({**schema, "components": document["components"]})
    return out


@pytest.mark.parametrize(
    ("path", "body", "loc"),
    [
        # The three a fuzzer found accepted by the schema and refused by the server.
        ("/v1/solve", {"snapshot": EMPTY}, ["body", "snapshot", "gpu_types"]),
        ("/v1/rounds", {"snapshot": EMPTY, "received": {}, "policy": "fifo"}, None),
        ("/v1/compare", {"before": CLUSTER, "after": None, "patch": None}, ["body", "after"]),
        # And what they uncovered next.
        (
            "/v1/solve",
            {"snapshot": {**CLUSTER, "gpu_types": [{"name": "g", "count": 0}]}},
            ["body", "snapshot", "gpu_types"],
        ),
        ("/v1/compare", {"before": CLUSTER, "after": CLUSTER, "patch": {}}, ["body", "after"]),
        ("/v1/rounds", {"snapshot": CLUSTER, "received": {}}, ["body", "allocation"]),
    ],
)
def test_what_the_server_refuses_the_schema_refuses(
    service: Service,
    validators: dict[str, Draft202012Validator],
    path: str,
    body: dict[str, Any],
    loc: list[str] | None,
) -> None:
    assert not validators[path].is_valid(body)
    errors = _problem(httpx.post(f"{service.base}{path}", json=body, timeout=60), 422)["errors"]
    if loc is not None:
        assert loc in [e["loc"] for e in errors]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/solve", {"snapshot": CLUSTER, "policy": None}),
        ("/v1/compare", {"before": CLUSTER, "after": CLUSTER, "patch": None}),
        ("/v1/compare", {"before": CLUSTER, "after": None, "patch": {"gpus": {"g": 1}}}),
        ("/v1/compare", {"before": CLUSTER, "patch": {}}),
    ],
)
def test_what_the_schema_allows_the_server_answers(
    service: Service, validators: dict[str, Draft202012Validator], path: str, body: dict[str, Any]
) -> None:
    validators[path].validate(body)
    response = httpx.post(f"{service.base}{path}", json=body, timeout=60)
    assert response.status_code == 200, response.text
