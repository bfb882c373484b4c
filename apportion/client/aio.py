"""`AsyncApportionClient`: `ApportionClient` for asyncio, method for method.

async with AsyncApportionClient("http://127.0.0.1:8000") as service:
    result = await service.solve(snapshot, policy="water_filling")
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx
from tenacity import AsyncRetrying

from apportion.client.errors import ServiceUnreachable
from apportion.client.retry import retry_settings
from apportion.client.sync import DEFAULT_URL
from apportion.client.wire import (
    DEFAULT_TIMEOUT,
    JSON_HEADERS,
    PolicyCatalog,
    compare_body,
    estimate_body,
    read_compare,
    read_estimate,
    read_policies,
    read_round,
    read_solve,
    rounds_body,
    solve_body,
)
from apportion.solver.result import Comparison, SolveResult

if TYPE_CHECKING:
    from apportion.estimation import EstimateDocument, EstimateInput
    from apportion.mechanism.document import RoundResult, RoundsInput
    from apportion.solver.snapshot import Snapshot


class AsyncApportionClient:
    """An asyncio connection pool to one apportion service; the arguments of
    `ApportionClient`, with an `httpx.AsyncBaseTransport`."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 5,
        max_retry_wait: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._retry = retry_settings(retries, max_retry_wait)
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            headers=dict(headers or {}),
            transport=transport,
        )

    async def solve(
        self,
        snapshot: Snapshot | Mapping[str, Any],
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> SolveResult:
        """`POST /v1/solve`, as `ApportionClient.solve`."""
        body = solve_body(snapshot, policy, {**(options or {}), **more_options})
        return read_solve(await self._send("POST", "/v1/solve", body))

    async def compare(
        self,
        before: Snapshot | Mapping[str, Any],
        after: Snapshot | Mapping[str, Any] | None = None,
        patch: Mapping[str, Any] | None = None,
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> Comparison:
        """`POST /v1/compare`: like `solver.compare.compare` (advisory what-if: `before` and
        `after`, or `before` and a `patch`); raises `InputError` naming each bad field."""
        body = compare_body(before, after, patch, policy, {**(options or {}), **more_options})
        return read_compare(await self._send("POST", "/v1/compare", body))

    async def rounds(self, request: RoundsInput | Mapping[str, Any]) -> RoundResult:
        """`POST /v1/rounds`, as `ApportionClient.rounds`."""
        return read_round(await self._send("POST", "/v1/rounds", rounds_body(request)))

    async def estimate(self, request: EstimateInput | Mapping[str, Any]) -> EstimateDocument:
        """`POST /v1/estimate`, as `ApportionClient.estimate`."""
        return read_estimate(await self._send("POST", "/v1/estimate", estimate_body(request)))

    async def policies(self) -> PolicyCatalog:
        """`GET /v1/policies`, as `ApportionClient.policies`."""
        return read_policies(await self._send("GET", "/v1/policies"))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _send(self, method: str, path: str, body: bytes | None = None) -> httpx.Response:
        retrying = AsyncRetrying(**self._retry)
        try:
            response: httpx.Response = await retrying(
                self._http.request, method, path, content=body, headers=JSON_HEADERS
            )
        except httpx.TimeoutException as exc:
            raise ServiceUnreachable(f"no answer in time ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ServiceUnreachable(f"{type(exc).__name__}: {exc}") from exc
        return response
