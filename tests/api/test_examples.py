"""The OpenAPI document's own examples, as /docs "Try it out" fills them in: every POST
operation carries one, and a real running service answers each with 200."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.service import Service, running_service


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with running_service(workers="1") as running:
        yield running


def prefilled(operation: dict[str, Any]) -> Any:
    """The body Swagger UI pre-fills: the media type's `example`, else its first `examples`."""
    media = operation["requestBody"]["content"]["application/json"]
    if "example" in media:
        return media["example"]
    examples = media.get("examples") or {}
    assert examples, f"no example for {operation['operationId']}"
    return next(iter(examples.values()))["value"]


def test_every_post_example_is_answered_200(service: Service) -> None:
    document = httpx.get(f"{service.base}/openapi.json", timeout=30).json()
    posts = {path: ops["post"] for path, ops in document["paths"].items() if "post" in ops}
    assert {"/v1/solve", "/v1/compare", "/v1/rounds"} <= set(posts)
    for path, operation in posts.items():
        response = httpx.post(f"{service.base}{path}", json=prefilled(operation), timeout=60)
        assert response.status_code == 200, (path, response.text[:500])


def test_the_solve_example_is_solved_to_optimality(service: Service) -> None:
    document = httpx.get(f"{service.base}/openapi.json", timeout=30).json()
    body = prefilled(document["paths"]["/v1/solve"]["post"])
    answer = httpx.post(f"{service.base}/v1/solve", json=body, timeout=60).json()
    assert answer["status"] == "optimal"
    assert {job["id"] for job in answer["jobs"]} == {j["id"] for j in body["snapshot"]["jobs"]}
