"""One way to ask apportion, wherever it runs: the `Client` interface, answered in this process
by `LocalClient` and by a running service by `ApportionClient` (over HTTP).

    from apportion.client import connect

    with connect(remote=None) as apportion:                 # or remote="http://host:8000"
        result = apportion.solve(snapshot, policy="max_min_fairness")

Both take the same arguments and return the same types (`SolveResult`, `Comparison`,
`RoundResult`, `EstimateDocument`, `PolicyCatalog`); bad input raises `solver.InputError` with
the same field locations. Only a service can fail as a service does (`ServiceError`:
unreachable, saturated, a solve it stopped).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

if TYPE_CHECKING:
    from apportion.client.wire import PolicyCatalog
    from apportion.estimation import EstimateDocument, EstimateInput
    from apportion.mechanism.document import RoundResult, RoundsInput
    from apportion.solver.result import Comparison, SolveResult
    from apportion.solver.snapshot import Snapshot


class Client(Protocol):
    """What apportion answers, in process or over HTTP.

    `where` names it in messages ("in process", or the service's URL). `local` is true when it
    answers in this process: a caller that holds a parsed `Snapshot` gives it as it is (nothing
    is copied), while a service is better sent the plain document the caller built."""

    where: str
    local: bool

    def solve(
        self,
        snapshot: Snapshot | Mapping[str, Any],
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> SolveResult: ...

    def compare(
        self,
        before: Snapshot | Mapping[str, Any],
        after: Snapshot | Mapping[str, Any] | None = None,
        patch: Mapping[str, Any] | None = None,
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> Comparison: ...

    def rounds(self, request: RoundsInput | Mapping[str, Any]) -> RoundResult: ...

    def estimate(self, request: EstimateInput | Mapping[str, Any]) -> EstimateDocument: ...

    def policies(self) -> PolicyCatalog: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...


def connect(remote: str | None = None, **settings: Any) -> Client:
    """In this process (`remote` None) or the service at `remote` (a base URL; `settings` are
    `ApportionClient`'s: timeout, retries, headers, transport)."""
    if remote is None:
        from apportion.client.local import LocalClient

        if settings:
            raise TypeError(f"settings for a service, not in process: {sorted(settings)}")
        return LocalClient()
    from apportion.client.sync import ApportionClient

    return ApportionClient(remote, **settings)
