"""One interface to ask apportion (`Client`), in this process (`LocalClient`) or from a running
service over HTTP (`ApportionClient`): the same methods, the library's own result objects.

    from apportion.client import ApportionClient, connect

    local = connect()                           # LocalClient: the same calls, in process

    with ApportionClient("http://127.0.0.1:8000") as service:
        result = service.solve(snapshot, policy="max_min_fairness")   # solver.SolveResult
        nxt = service.rounds({"snapshot": ..., "allocation": ..., "received": ...})
        service.policies().names

`AsyncApportionClient` is the same for asyncio. Bad input raises `solver.InputError` with the
fields' locations, as `solver.solve` does; the service's other answers raise a `ServiceError`
(`ServiceUnavailable` after the retries on 503, `SolveStopped` on 504, `ServiceUnreachable`
without an answer). Importing this package loads httpx, tenacity and the result types only.
"""

from __future__ import annotations

from apportion.client.aio import AsyncApportionClient
from apportion.client.errors import (
    ServiceError,
    ServiceUnavailable,
    ServiceUnreachable,
    SolveStopped,
)
from apportion.client.interface import Client, connect
from apportion.client.local import LocalClient
from apportion.client.sync import ApportionClient
from apportion.client.wire import PolicyCatalog, PolicyInfo
from apportion.solver.errors import FieldError, InputError

__all__ = [
    "ApportionClient",
    "AsyncApportionClient",
    "Client",
    "FieldError",
    "InputError",
    "LocalClient",
    "PolicyCatalog",
    "PolicyInfo",
    "ServiceError",
    "ServiceUnavailable",
    "ServiceUnreachable",
    "SolveStopped",
    "connect",
]
