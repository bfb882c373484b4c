"""How the simulator asks a policy: a `Request` (the snapshot of a decision point) in, an
`Answer` (allocation, placements, per-job metrics) out.

apportion's policies are called in process through `solver.pipeline.solve`, or through a running
service's POST /v1/solve with the same JSON (`--http URL`), so a simulation exercises the service
exactly as a scheduler would. Baselines (`simulator.baselines`) answer the same requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from apportion.simulator.state import JobStates
from apportion.solver.arraytypes import IntArray
from apportion.solver.status import Status

if TYPE_CHECKING:
    from apportion.client import ApportionClient
    from apportion.solver.result import SolveResult
    from apportion.solver.snapshot import Snapshot

#: Statuses whose allocation may be enacted (an incumbent within a limit is still a decision);
#: the one vocabulary's own set, by value, since answers may come over HTTP.
USABLE = frozenset(status.value for status in Status if status.has_solution)
#: A saturated service answers 503 with Retry-After; a scheduler waits and asks again.
HTTP_ATTEMPTS = 20


class PolicyError(RuntimeError):
    """The policy rejected the simulator's snapshot (a trace field the policy needs is missing,
    a service error): the simulation cannot go on. `invalid_input`: the options or the trace
    were at fault (a 422), not the solver or the service."""

    def __init__(self, message: str, invalid_input: bool = False) -> None:
        super().__init__(message)
        self.invalid_input = invalid_input


class Request:
    """One decision point: the active jobs offered to the policy, and their snapshot (built
    only when a policy needs it, parsed once for both the policy and the mechanism). `free`:
    the GPUs per type a baseline may hand out (None: the whole cluster; the snapshot says what
    running jobs hold for apportion's policies).

    `validated`: parts of the document the caller already holds as validated objects (the
    placement enactor's contention table, the same at every event): the in-process snapshot
    takes them as they are instead of validating their JSON again at every call."""

    def __init__(
        self,
        table: JobStates,
        jobs: IntArray,
        now: float,
        build: Callable[[], dict[str, Any]],
        free: IntArray | None = None,
        validated: Mapping[str, Any] | None = None,
    ) -> None:
        self.table = table
        self.jobs = jobs
        self.now = now
        self.free = free
        self._build = build
        self._validated = dict(validated or {})

    @cached_property
    def document(self) -> dict[str, Any]:
        return self._build()

    @cached_property
    def snapshot(self) -> Snapshot:
        from apportion.solver.errors import InputError
        from apportion.solver.snapshot import parse_snapshot

        try:
            if not self._validated:
                return parse_snapshot(self.document)
            rest = {k: v for k, v in self.document.items() if k not in self._validated}
            return parse_snapshot(rest).model_copy(update=self._validated)
        except InputError as exc:
            raise PolicyError(
                f"the simulated snapshot is invalid: {exc.one_line()}", invalid_input=True
            ) from None


@dataclass
class Answer:
    """A policy's decision in the snapshot's ids."""

    status: str
    allocation: dict[str, dict[str, float]] = field(default_factory=dict)
    placement: dict[str, dict[str, int]] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    # Every active job best first, from a decider that ranks jobs rather than placing them (a
    # baseline): placement mode places them in this order under the trace's rules.
    order: list[str] = field(default_factory=list)
    termination: str = ""  # why the solver stopped (`time_limit` when a call hit its limit)
    seconds: float = 0.0  # wall time of the call, as the caller saw it
    solver_seconds: float = 0.0  # what the policy reports as its own total
    # Seconds after which the policy would decide otherwise with no job arriving or finishing
    # (Tiresias: a queue demotion or promotion); None: not before the next event.
    revisit_after: float | None = None

    @property
    def usable(self) -> bool:
        return self.status in USABLE

    @classmethod
    def from_result(cls, result: SolveResult) -> Answer:
        jobs = result.jobs
        return cls(
            status=result.status.value,
            allocation={j.id: j.allocation for j in jobs if j.allocation},
            placement={j.id: j.placement for j in jobs if j.placement},
            metrics={j.id: j.metrics for j in jobs if j.metrics},
            pairs=list(result.summary.get("pair_allocations", [])),
            termination=result.termination.value,
            solver_seconds=result.solver.total_seconds,
            revisit_after=result.summary.get("revisit_after"),
        )


class Decider(Protocol):
    """A policy the simulator can ask: apportion's (in process or over HTTP) or a baseline."""

    name: str
    baseline: bool

    def decide(self, request: Request) -> Answer: ...

    def close(self) -> None: ...


class ApportionPolicy:
    """One of apportion's policies, solved in process or by a running service."""

    baseline = False

    def __init__(self, name: str, options: Mapping[str, Any], http: str | None = None) -> None:
        self.name = name
        self.options = dict(options)
        self._http: ApportionClient | None = None
        if http:
            import httpx

            from apportion.client import ApportionClient

            # A simulation waits out a saturated service as a scheduler would, with no limit on
            # an answer's wait: the service bounds every solve itself.
            wait = httpx.Timeout(10.0, read=None)
            self._http = ApportionClient(http, timeout=wait, retries=HTTP_ATTEMPTS)

    def decide(self, request: Request) -> Answer:
        started = time.perf_counter()
        if self._http is not None:
            answer = self._remote(request, self._http)
        else:
            answer = Answer.from_result(self._solve(request))
        answer.seconds = time.perf_counter() - started
        return answer

    def _remote(self, request: Request, service: ApportionClient) -> Answer:
        from apportion.client import ServiceError, SolveStopped
        from apportion.solver.errors import InputError

        try:
            return Answer.from_result(service.solve(request.document, self.name, self.options))
        except SolveStopped:
            # The service ended the solve: no answer, so the last decision stays in force.
            return Answer(status="stopped")
        except InputError as exc:
            raise PolicyError(f"POST /v1/solve: {exc.one_line()}", invalid_input=True) from None
        except ServiceError as exc:
            raise PolicyError(f"POST /v1/solve: {exc}") from None

    def _solve(self, request: Request) -> SolveResult:
        from apportion.solver.errors import InputError
        from apportion.solver.pipeline import solve

        try:
            return solve(request.snapshot, policy=self.name, options=self.options)
        except InputError as exc:
            raise PolicyError(f"policy {self.name}: {exc.one_line()}", invalid_input=True) from None

    def close(self) -> None:
        if self._http is not None:
            self._http.close()


class TypeBlindPolicy(ApportionPolicy):
    """A policy blind to GPU types (Gavel's heterogeneity-agnostic baselines): it is shown
    each job at one speed on every type the job can use, its mean over the cluster's GPUs of
    those types (`simulator.snapshots.type_blind`); the simulator enacts its answer at the
    jobs' true speeds."""

    def decide(self, request: Request) -> Answer:
        from apportion.simulator.snapshots import type_blind

        blind = Request(
            request.table, request.jobs, request.now, lambda: type_blind(request.document)
        )
        return super().decide(blind)
