"""`LocalClient`: the `Client` interface answered in this process, by the same functions the
service runs (`solver.pipeline.solve`, `solver.compare.compare`, `mechanism.document`), so that
moving a caller onto a service is one argument (`connect(remote=url)`), not a second code path.

The solver stack is imported on the first call, not with this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel

from apportion.client.wire import PolicyCatalog

if TYPE_CHECKING:
    from apportion.estimation import EstimateDocument, EstimateInput
    from apportion.mechanism.document import RoundResult, RoundsInput
    from apportion.solver.result import Comparison, SolveResult
    from apportion.solver.snapshot import Snapshot


class LocalClient:
    """apportion in this process: `ApportionClient`'s methods, arguments and return types."""

    where = "in process"
    local = True

    def solve(
        self,
        snapshot: Snapshot | Mapping[str, Any],
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> SolveResult:
        """`solver.solve`: raises `InputError` naming each bad field."""
        from apportion.solver.pipeline import solve

        return solve(snapshot, policy, {**(options or {}), **more_options})

    def compare(
        self,
        before: Snapshot | Mapping[str, Any],
        after: Snapshot | Mapping[str, Any] | None = None,
        patch: Mapping[str, Any] | None = None,
        policy: str | None = None,
        options: Mapping[str, Any] | None = None,
        **more_options: Any,
    ) -> Comparison:
        """`solver.compare.compare` (advisory what-if: `before` and `after`, or a `patch`)."""
        from apportion.solver.compare import compare

        given = None if after is None else _plain(after)
        merged = {**(options or {}), **more_options}
        return compare(_plain(before), given, patch, policy, merged)

    def rounds(self, request: RoundsInput | Mapping[str, Any]) -> RoundResult:
        """The next round (`mechanism.document.round_result`), for the same request
        `POST /v1/rounds` takes; raises `InputError` naming each bad field."""
        from apportion.estimation.rounds import parse_rounds_with_estimate, round_with_estimate

        return round_with_estimate(parse_rounds_with_estimate(request))

    def estimate(self, request: EstimateInput | Mapping[str, Any]) -> EstimateDocument:
        """The estimate document (`estimation.estimate`) for the same request `POST
        /v1/estimate` takes; raises `InputError` naming each bad field."""
        from apportion.estimation import estimate

        return estimate(request)

    def policies(self) -> PolicyCatalog:
        """Every policy with the JSON Schema of its options, as `GET /v1/policies` lists them."""
        from apportion.solver.catalog import policy_catalog

        return PolicyCatalog.model_validate(policy_catalog())

    def close(self) -> None:
        """Nothing to release: no connection, no process."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _plain(snapshot: Snapshot | Mapping[str, Any]) -> Mapping[str, Any]:
    """`compare` patches documents: a parsed snapshot is written back as the one it was given
    (only what was set, as the service would receive it)."""
    if isinstance(snapshot, BaseModel):
        return snapshot.model_dump(mode="json", exclude_unset=True)
    return snapshot
