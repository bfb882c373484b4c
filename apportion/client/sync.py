"""`ApportionClient`: the service's endpoints as methods returning the library's own types.

    with ApportionClient("http://127.0.0.1:8000") as service:
        result = service.solve(snapshot, policy="max_min_fairness")   # a SolveResult
        result.job("job-3").allocation
        service.solve(snapshot, explain=True).explanation          # why, per job and GPU type
        service.compare(snapshot, patch={"gpus": {"v100": 2}})       # what-if (advisory)

`solve` mirrors `solver.solve` (same arguments, same `SolveResult`, the same `InputError` with
the same field locations for bad input), so a scheduler can move a solve out of its process by
changing one call.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx
from tenacity import Retrying

from apportion.client.errors import ServiceUnreachable
from apportion.client.retry import retry_settings
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

DEFAULT_URL = "http://127.0.0.1:8000"


class ApportionClient:
    """A connection pool to one apportion service.

    - timeout: seconds, or an `httpx.Timeout` (default: 10 s to connect, 330 s for an answer,
      above the service's largest time limit plus its grace period)
    - retries: further attempts after a 503 or a failed connection (waiting as `Retry-After`
      says, else backing off exponentially), at most `max_retry_wait` seconds apart
    - headers: sent with every request (e.g. what your authenticating proxy needs)
    - transport: an `httpx.BaseTransport` (a proxy, a Unix socket, TLS settings)

    It is the `client.Client` interface over HTTP; `LocalClient` is the same in process.
    """

    local = False

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        retries: int = 5,
        max_retry_wait: float = 60.0,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.where = base_url.rstrip("/")
        self._retry = retry_settings(retries, max_retry_wait)
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            timeout=timeout,
            headers=dict(headers or {}),
            transport=transport,
        )

    def solve(
        self,
        snapshot: Snapshot | Mapping[str, Any],
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> SolveResult:
        """`POST /v1/solve`: like `solver.solve`; raises `InputError` naming each bad field,
        `SolveStopped` (504), `ServiceUnavailable` or `ServiceUnreachable`."""
        body = solve_body(snapshot, policy, {**(options or {}), **more_options})
        return read_solve(self._send("POST", "/v1/solve", body))

    def compare(
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
        return read_compare(self._send("POST", "/v1/compare", body))

    def rounds(self, request: RoundsInput | Mapping[str, Any]) -> RoundResult:
        """`POST /v1/rounds`: the next round (`mechanism.document.RoundResult`, what
        `round_result` returns in process) for `{snapshot, allocation | policy + options,
        received, previous, pairs, elapsed}`."""
        return read_round(self._send("POST", "/v1/rounds", rounds_body(request)))

    def estimate(self, request: EstimateInput | Mapping[str, Any]) -> EstimateDocument:
        """`POST /v1/estimate`: the estimate document (`estimation.EstimateDocument`, what
        `estimation.estimate` returns in process) for `{estimate, reference, jobs,
        observations, forget, pairs, options}`."""
        return read_estimate(self._send("POST", "/v1/estimate", estimate_body(request)))

    def policies(self) -> PolicyCatalog:
        """`GET /v1/policies`: every policy with the JSON Schema of its options."""
        return read_policies(self._send("GET", "/v1/policies"))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, method: str, path: str, body: bytes | None = None) -> httpx.Response:
        retrying = Retrying(**self._retry)
        try:
            response: httpx.Response = retrying(
                self._http.request, method, path, content=body, headers=JSON_HEADERS
            )
        except httpx.TimeoutException as exc:
            raise ServiceUnreachable(f"no answer in time ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ServiceUnreachable(f"{type(exc).__name__}: {exc}") from exc
        return response
