"""What a call to the service can fail with, besides `solver.InputError` (bad input, 400/422).

Every other failure is a `ServiceError` carrying the HTTP status (None when no answer came) and
the problem's `detail`, so a caller can tell "fix the request" from "try later".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ServiceError(Exception):
    """The service did not answer with a result: a problem answer other than bad input, or no
    answer at all (`status` None)."""

    def __init__(
        self,
        status: int | None,
        detail: str,
        *,
        errors: Sequence[dict[str, Any]] = (),
        request_id: str | None = None,
    ) -> None:
        self.status = status
        self.detail = detail
        self.errors = tuple(errors)
        self.request_id = request_id
        where = f"HTTP {status}" if status is not None else "no answer"
        super().__init__(f"{where}: {detail}")


class ServiceUnavailable(ServiceError):
    """Still saturated (503) after every retry; `retry_after` is the service's last hint, in
    seconds."""

    def __init__(
        self, detail: str, retry_after: float | None, *, request_id: str | None = None
    ) -> None:
        super().__init__(503, detail, request_id=request_id)
        self.retry_after = retry_after


class SolveStopped(ServiceError):
    """The service stopped the solve at its time limit (504): no allocation came back. Raise
    `time_limit`, or keep the last decision in force."""


class ServiceUnreachable(ServiceError):
    """No HTTP answer: the connection failed on every attempt, or the answer took longer than
    the client's timeout."""

    def __init__(self, detail: str) -> None:
        super().__init__(None, detail)
