"""How the simulator asks a policy: a `Request` (the snapshot of a decision point) in, a
`Reply` (allocation, placements, per-job metrics) out.

apportion's policies are asked through one `client.Client`: `LocalClient` in process, or
`ApportionClient` on a running service's POST /v1/solve (`--http URL`), by the same call, so a
simulation exercises the service exactly as a scheduler would. Baselines
(`simulator.baselines`) answer the same requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from apportion.simulator.state import JobStates
from apportion.solver.arraytypes import IntArray
from apportion.solver.status import Status

if TYPE_CHECKING:
    from apportion.client import Client
    from apportion.solver.result import SolveResult
    from apportion.solver.result.table import JobTable
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


class Reply:
    """A decider's answer to a `Request`, in the snapshot's ids. apportion's policies reply
    with the result's columns as they came (`columns`, a `JobTable`: the solver's arrays in
    process, JSON columns read back into arrays over HTTP), which the rounds mechanism takes as
    they are; the per-job mappings (`allocation`, `placement`, `metrics`) are read from them
    only by what asks for them. Baselines reply with the mappings."""

    def __init__(
        self,
        status: str,
        allocation: dict[str, dict[str, float]] | None = None,
        placement: dict[str, dict[str, int]] | None = None,
        metrics: dict[str, dict[str, Any]] | None = None,
        pairs: list[dict[str, Any]] | None = None,
        order: list[str] | None = None,
        *,
        columns: JobTable | None = None,
        termination: str = "",
        solver_seconds: float = 0.0,
        revisit_after: float | None = None,
    ) -> None:
        self.status = status
        self.columns = columns
        self._allocation, self._placement, self._metrics = allocation, placement, metrics
        self.pairs = pairs or []
        # Every active job best first, from a decider that ranks jobs rather than placing them
        # (a baseline): placement mode places them in this order under the trace's rules.
        self.order = order or []
        self.termination = termination  # why the solver stopped (`time_limit`: at its limit)
        self.seconds = 0.0  # wall time of the call, as the caller saw it
        self.cpu_seconds = 0.0  # this process's CPU time in the call (load does not move it)
        self.solver_seconds = solver_seconds  # what the policy reports as its own total
        # Seconds after which the policy would decide otherwise with no job arriving or
        # finishing (Tiresias: a queue demotion or promotion); None: not before the next event.
        self.revisit_after = revisit_after

    @property
    def usable(self) -> bool:
        return self.status in USABLE

    @property
    def allocation(self) -> dict[str, dict[str, float]]:
        if self._allocation is None:
            rows = self.columns or ()
            self._allocation = {j.id: j.allocation for j in rows if j.allocation}
        return self._allocation

    @property
    def placement(self) -> dict[str, dict[str, int]]:
        if self._placement is None:
            table = self.columns
            self._placement = (
                {}
                if table is None
                else {table.ids[r]: p for r, p in sorted(table.placements.items()) if p}
            )
        return self._placement

    @property
    def metrics(self) -> dict[str, dict[str, Any]]:
        if self._metrics is None:
            rows = self.columns or ()
            self._metrics = {j.id: j.metrics for j in rows if j.metrics}
        return self._metrics

    @classmethod
    def from_result(cls, result: SolveResult) -> Reply:
        from apportion.solver.result.table import JobTable

        jobs = result.jobs
        table = jobs if isinstance(jobs, JobTable) else None
        mappings: dict[str, Any] = {}
        if table is None:  # jobs given as a list (a result built by hand)
            mappings = {
                "allocation": {j.id: j.allocation for j in jobs if j.allocation},
                "placement": {j.id: j.placement for j in jobs if j.placement},
                "metrics": {j.id: j.metrics for j in jobs if j.metrics},
            }
        return cls(
            status=result.status.value,
            pairs=list(result.summary.get("pair_allocations", [])),
            columns=table,
            termination=result.termination.value,
            solver_seconds=result.solver.total_seconds,
            revisit_after=result.summary.get("revisit_after"),
            **mappings,
        )


class Decider(Protocol):
    """A policy the simulator can ask: apportion's (in process or over HTTP) or a baseline."""

    name: str
    baseline: bool

    def decide(self, request: Request) -> Reply: ...

    def close(self) -> None: ...


class ApportionPolicy:
    """One of apportion's policies, asked through one `client.Client`: in this process, or a
    running service's POST /v1/solve (`http`, its base URL), by the same call."""

    baseline = False

    def __init__(self, name: str, options: Mapping[str, Any], http: str | None = None) -> None:
        self.name = name
        self.options = dict(options)
        # The answer as columns both ways: over HTTP the service writes its arrays as JSON
        # columns, read back into arrays, never a JSON object per job.
        self._asked = {**self.options, "jobs_layout": "columns"}
        self._client = _client(http)

    def decide(self, request: Request) -> Reply:
        from apportion.client import ServiceError, SolveStopped
        from apportion.solver.errors import InputError

        client = self._client
        where = f"policy {self.name}" if client.local else "POST /v1/solve"
        # In process the parsed snapshot is shared with the mechanism; a service reads JSON.
        started = time.perf_counter()
        try:
            given = request.snapshot if client.local else request.document
            reply = Reply.from_result(client.solve(given, self.name, self._asked))
        except SolveStopped:
            # The service ended the solve: no answer, so the last decision stays in force.
            reply = Reply(status="stopped")
        except InputError as exc:
            raise PolicyError(f"{where}: {exc.one_line()}", invalid_input=True) from None
        except ServiceError as exc:
            raise PolicyError(f"{where}: {exc}") from None
        reply.seconds = time.perf_counter() - started
        return reply

    def close(self) -> None:
        self._client.close()


def _client(http: str | None) -> Client:
    from apportion.client import connect

    if http is None:
        return connect()
    import httpx

    # A simulation waits out a saturated service as a scheduler would, with no limit on an
    # answer's wait: the service bounds every solve itself.
    return connect(http, timeout=httpx.Timeout(10.0, read=None), retries=HTTP_ATTEMPTS)


class TypeBlindPolicy(ApportionPolicy):
    """A policy blind to GPU types (Gavel's heterogeneity-agnostic baselines): it is shown
    each job at one speed on every type the job can use, its mean over the cluster's GPUs of
    those types (`simulator.snapshots.type_blind`); the simulator enacts its answer at the
    jobs' true speeds."""

    def decide(self, request: Request) -> Reply:
        from apportion.simulator.snapshots import type_blind

        blind = Request(
            request.table, request.jobs, request.now, lambda: type_blind(request.document)
        )
        return super().decide(blind)
