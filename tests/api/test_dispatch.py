"""The recipe for an endpoint, followed here as a new endpoint would follow it: one module
declares the request model, the work and the route (`api.dispatch.post`); included under
/v1, it is served in a worker process under the service's limits, and typed in the OpenAPI
document with its problem responses. Nothing else is edited."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from pydantic import BaseModel

from apportion.api.dispatch import Typed, post
from apportion.api.main import VERSION, create_app
from apportion.api.settings import Settings
from apportion.api.worker import Done, Endpoint, Limited, validated


class EchoBody(BaseModel):
    policy: str | None = None
    jobs: int
    options: dict[str, Any] | None = None


class EchoAnswer(BaseModel):
    jobs: int
    time_limit: float
    threads: int


def _read(data: Any) -> EchoBody:
    return validated(EchoBody, data)


def _limited(request: EchoBody) -> Limited:
    return request.policy, request.options


def _run(request: EchoBody, options: dict[str, Any] | None) -> Done:
    assert options is not None  # `_limited` always names the options that bound the work
    answer = EchoAnswer(
        jobs=request.jobs, time_limit=options["time_limit"], threads=options["threads"]
    )
    return answer, {"status": "echoed"}


ECHO = Endpoint(_read, _limited, _run)
router = APIRouter()
post(
    router,
    "/echo",
    ECHO,
    Typed(lambda: (EchoBody,), EchoAnswer, "the request, as the worker read it"),
    name="echo",
    summary="Echo",
)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = Settings(workers=1, default_time_limit=7, max_time_limit=20)
    app = create_app(settings)
    app.include_router(router, prefix=VERSION)
    with TestClient(app) as running:
        yield running


def test_the_new_endpoint_runs_in_a_worker_under_the_service_limits(client: TestClient) -> None:
    given = client.post("/v1/echo", json={"jobs": 3, "options": {"time_limit": 5}})
    assert given.status_code == 200, given.text
    assert given.json() == {"jobs": 3, "time_limit": 5.0, "threads": 1}
    # No time limit: the named policy's default (deadline admission's 3 s), else the service's.
    named = client.post("/v1/echo", json={"jobs": 1, "policy": "deadline_admission"})
    assert named.json()["time_limit"] == 3.0
    assert client.post("/v1/echo", json={"jobs": 1}).json()["time_limit"] == 7.0


def test_the_new_endpoint_refuses_bad_input_field_by_field(client: TestClient) -> None:
    over = client.post("/v1/echo", json={"jobs": 1, "options": {"time_limit": 50, "threads": 2}})
    assert over.status_code == 422
    assert over.headers["content-type"] == "application/problem+json"
    locs = [error["loc"] for error in over.json()["errors"]]
    assert ["body", "options", "threads"] in locs and ["body", "options", "time_limit"] in locs
    wrong = client.post("/v1/echo", json={"jobs": "three"})
    assert wrong.status_code == 422 and wrong.json()["errors"][0]["loc"] == ["body", "jobs"]
    malformed = client.post("/v1/echo", content=b"{", headers={"content-type": "application/json"})
    assert malformed.status_code == 400
    assert client.post("/v1/echo", content=b"x").status_code == 415


def test_the_new_endpoint_is_typed_in_the_openapi_document(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    operation = document["paths"]["/v1/echo"]["post"]
    assert operation["operationId"].startswith("echo")
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/EchoBody"}
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/EchoAnswer"}
    for code in ("422", "503", "504"):
        problem = operation["responses"][code]["content"]["application/problem+json"]["schema"]
        assert problem == {"$ref": "#/components/schemas/Problem"}
    schemas = document["components"]["schemas"]
    assert schemas["EchoBody"]["required"] == ["jobs"]
    assert set(schemas["EchoAnswer"]["properties"]) == {"jobs", "time_limit", "threads"}
