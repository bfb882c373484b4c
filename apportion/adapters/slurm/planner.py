"""Where the policy and the round are computed: in this process (`LocalPlanner`: `solver.solve`
and `mechanism.next_round`) or by a running apportion service (`RemotePlanner`: `POST
/v1/solve` and `POST /v1/rounds` through `client.ApportionClient`).

Both answer the same two questions and fail the same way: a `PlanError` with one line saying
what went wrong (service unreachable, solve without an allocation, input refused), upon which
the controller changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from apportion.client import ApportionClient, ServiceError
from apportion.mechanism import Assignment, Round, allocation_of, next_round
from apportion.solver.errors import InputError
from apportion.solver.result import SolveResult
from apportion.solver.snapshot import parse_snapshot

if TYPE_CHECKING:
    from apportion.mechanism.document import RoundResult

Allocation = dict[str, dict[str, float]]


class PlanError(RuntimeError):
    """No round can be computed now; the message says why (one line)."""


@dataclass(frozen=True)
class Decision:
    """A policy's answer as the controller uses it."""

    allocation: Allocation
    status: str
    warnings: tuple[str, ...] = ()


class Planner(Protocol):
    """Computes the allocation and the round."""

    where: str

    def decide(
        self, snapshot: Mapping[str, Any], policy: str, options: Mapping[str, Any]
    ) -> Decision:
        """The policy's allocation for `snapshot`; `PlanError` when there is none."""
        ...

    def next_round(
        self,
        snapshot: Mapping[str, Any],
        allocation: Allocation,
        received: Mapping[str, Mapping[str, float]],
        previous: Mapping[str, Mapping[str, int]],
        *,
        rule: str = "gavel",
        round_seconds: float | None = None,
    ) -> Round:
        """The round for `allocation` under `rule` (`mechanism.Rule`; `deficit` needs
        `round_seconds`); `PlanError` when it cannot be computed."""
        ...


def _decision(result: SolveResult) -> Decision:
    if not result.status.has_solution:
        reasons = "; ".join(result.warnings[:2])
        raise PlanError(f"the solve ended {result.status.value} without an allocation {reasons}")
    allocation, _ = allocation_of(result)
    return Decision(allocation, result.status.value, tuple(result.warnings))


class LocalPlanner:
    """The policy and the round in this process."""

    where = "in process"

    def decide(
        self, snapshot: Mapping[str, Any], policy: str, options: Mapping[str, Any]
    ) -> Decision:
        from apportion.solver.pipeline import solve  # the solver stack, only where it solves

        try:
            return _decision(solve(snapshot, policy=policy, options=options))
        except InputError as exc:
            raise PlanError(f"the policy refused the snapshot: {exc.one_line()}") from None

    def next_round(
        self,
        snapshot: Mapping[str, Any],
        allocation: Allocation,
        received: Mapping[str, Mapping[str, float]],
        previous: Mapping[str, Mapping[str, int]],
        *,
        rule: str = "gavel",
        round_seconds: float | None = None,
    ) -> Round:
        try:
            return next_round(
                parse_snapshot(snapshot),
                allocation,
                received,
                previous,
                rule=rule,
                round_seconds=round_seconds,
            )
        except InputError as exc:
            raise PlanError(f"the round refused its input: {exc.one_line()}") from None


class RemotePlanner:
    """The policy and the round by a running apportion service at `url`. Few retries and short
    waits: a round that cannot be computed in time is skipped, not delayed."""

    def __init__(self, url: str, timeout: float = 60.0, retries: int = 1) -> None:
        self.where = url
        self._client = ApportionClient(
            url,
            timeout=httpx.Timeout(min(timeout, 10.0), read=timeout),
            retries=retries,
            max_retry_wait=2.0,
        )

    def close(self) -> None:
        self._client.close()

    def decide(
        self, snapshot: Mapping[str, Any], policy: str, options: Mapping[str, Any]
    ) -> Decision:
        try:
            return _decision(self._client.solve(snapshot, policy=policy, options=options))
        except InputError as exc:
            raise PlanError(
                f"apportion at {self.where} refused the snapshot: {exc.one_line()}"
            ) from None
        except ServiceError as exc:
            raise PlanError(f"apportion at {self.where}: {exc}") from None

    def next_round(
        self,
        snapshot: Mapping[str, Any],
        allocation: Allocation,
        received: Mapping[str, Mapping[str, float]],
        previous: Mapping[str, Mapping[str, int]],
        *,
        rule: str = "gavel",
        round_seconds: float | None = None,
    ) -> Round:
        body = {
            "snapshot": snapshot,
            "allocation": allocation,
            "received": received,
            "previous": previous,
            "rule": rule,
            "round_seconds": round_seconds,
        }
        try:
            return round_of(self._client.rounds(body))
        except InputError as exc:
            raise PlanError(
                f"apportion at {self.where} refused the round: {exc.one_line()}"
            ) from None
        except ServiceError as exc:
            raise PlanError(f"apportion at {self.where}: {exc}") from None


def round_of(result: RoundResult) -> Round:
    """The service's round answer as the library's `Round` (assignments in serving order, as
    the service lists them; a null priority is infinite)."""
    assignments = tuple(
        Assignment(
            job=job,
            gpu_type=a.gpu_type,
            placement=dict(a.placement),
            kept=a.kept,
            priority=math.inf if a.priority is None else a.priority,
            shared_with=a.shared_with,
        )
        for job, a in result.assignments.items()
    )
    return Round(
        assignments=assignments,
        idle=dict(result.idle),
        waiting=tuple(result.waiting),
        reasons=dict(result.reasons),
        elapsed=result.elapsed,
    )
