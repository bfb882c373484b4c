"""Where the policy is computed and how its answer becomes a round: one `RoundPlanner` over a
`client.Client`, in this process (`LocalClient`) or on a running apportion service
(`ApportionClient`: `POST /v1/solve`), the same calls either way.

The round is computed here, by the mechanism (`mechanism.next_round`), from the answer's columns
as they come (`SolveResult.jobs`, a `JobTable`): an allocation crosses from the policy to the
mechanism as the solver's arrays in process, or as JSON columns read back into arrays over HTTP,
never as a mapping per job. Both fail the same way: a `PlanError` with one line saying what went
wrong (service unreachable, solve without an allocation, input refused), upon which the
controller changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from apportion.client import Client, ServiceError, connect
from apportion.mechanism import Round, next_round
from apportion.solver.errors import InputError
from apportion.solver.result import SolveResult
from apportion.solver.result.table import JobTable
from apportion.solver.snapshot import parse_snapshot


class PlanError(RuntimeError):
    """No round can be computed now; the message says why (one line)."""


@dataclass(frozen=True)
class Decision:
    """A policy's answer as the controller uses it: the allocation as the result's columns
    (jobs × GPU types; `allocation.by_id(job)` reads one job)."""

    allocation: JobTable
    status: str
    warnings: tuple[str, ...] = ()


class RoundPlanner:
    """The policy by `client` (in process by default), the round by the mechanism here."""

    def __init__(self, client: Client | None = None) -> None:
        self.client = client or connect()
        self.where = self.client.where

    @classmethod
    def remote(cls, url: str, timeout: float = 60.0, retries: int = 1) -> RoundPlanner:
        """The policy by the service at `url`. Few retries and short waits: a round that cannot
        be computed in time is skipped, not delayed."""
        wait = httpx.Timeout(min(timeout, 10.0), read=timeout)
        return cls(connect(url, timeout=wait, retries=retries, max_retry_wait=2.0))

    def close(self) -> None:
        self.client.close()

    def decide(
        self, snapshot: Mapping[str, Any], policy: str, options: Mapping[str, Any]
    ) -> Decision:
        """The policy's allocation for `snapshot`; `PlanError` when there is none."""
        # Columns both ways: the service writes the answer's arrays as JSON columns.
        asked = {**options, "jobs_layout": "columns"}
        try:
            return _decision(self.client.solve(snapshot, policy=policy, options=asked))
        except InputError as exc:
            raise PlanError(f"{self._who} refused the snapshot: {exc.one_line()}") from None
        except ServiceError as exc:
            raise PlanError(f"apportion at {self.where}: {exc}") from None

    def next_round(
        self,
        snapshot: Mapping[str, Any],
        allocation: JobTable | Mapping[str, Mapping[str, float]],
        received: Mapping[str, Mapping[str, float]],
        previous: Mapping[str, Mapping[str, int]],
        *,
        rule: str = "gavel",
        round_seconds: float | None = None,
    ) -> Round:
        """The round for `allocation` (jobs the snapshot does not list are not in it) under
        `rule` (`mechanism.Rule`; `deficit` needs `round_seconds`); `PlanError` when it cannot
        be computed."""
        try:
            parsed = parse_snapshot(snapshot)
            return next_round(
                parsed, allocation, received, previous, rule=rule, round_seconds=round_seconds
            )
        except InputError as exc:
            raise PlanError(f"the round refused its input: {exc.one_line()}") from None

    @property
    def _who(self) -> str:
        return "the policy" if self.client.local else f"apportion at {self.where}"


def _decision(result: SolveResult) -> Decision:
    if not result.status.has_solution:
        reasons = "; ".join(result.warnings[:2])
        raise PlanError(f"the solve ended {result.status.value} without an allocation {reasons}")
    if not isinstance(result.jobs, JobTable):  # a result built by hand, not by a solve
        raise PlanError("the answer's jobs are not columns")
    return Decision(result.jobs, result.status.value, tuple(result.warnings))
