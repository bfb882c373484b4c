"""The solver pool as a request sees it: admission, the wait for an answer, cancellation.

- A request is admitted before its body is read: at most `workers` solves run and `queue_size`
  more wait, and the request bodies held at once stay within the upload budget; beyond either,
  503 + Retry-After without reading the body.
- A solve whose client goes away is cancelled: its process group is ended within
  `POLL_SECONDS` and a fresh process takes its place (a native solve cannot be interrupted from
  another thread).
- A process that dies, idle or busy (a solver's abort, the time-limit alarm of `api.worker`,
  the kernel's OOM killer, a stray kill), costs at most the one request it was running a
  problem answer; `api.supervisor` replaces it and everyone else goes on.
- Shutdown: requests waiting for a worker are answered 503 at once, running ones end within
  their limit; a request the server stops waiting for has its solve ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import Gauge

from apportion.api.body import SPOOL_BYTES
from apportion.api.problems import MEDIA_TYPE, Refused
from apportion.api.settings import Settings
from apportion.api.spool import Spool, default_location
from apportion.api.supervisor import Job, Supervisor
from apportion.api.worker import DECLARED_IN, Endpoint, Limits, RenderedResponse

POLL_SECONDS = 0.25  # how often a waiting request checks that its client is still there
IN_FLIGHT = Gauge("apportion_in_flight", "Requests being solved or waiting for a worker")
QUEUED = Gauge("apportion_queue_depth", "Requests waiting for a worker")
WORKERS = Gauge("apportion_workers", "Solver processes configured")
HELD = Gauge("apportion_body_bytes_held", "Request-body bytes held (the upload budget's use)")


@dataclass
class Load:
    admitted: int = 0  # reading their body, waiting or running
    capacity: int = 0
    workers: int = 0

    @property
    def queued(self) -> int:
        return max(self.admitted - self.workers, 0)

    @property
    def saturated(self) -> bool:
        return self.admitted >= self.capacity


class Ticket:
    """An admitted request's hold on the upload budget."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.held = 0

    def hold(self, size: int) -> None:
        """Hold `size` body bytes in all (a declared length, or what has arrived so far)."""
        more = size - self.held
        if more <= 0:
            return
        if not self.spool.hold(more):
            detail = f"the service holds as many request bodies as it may ({self.spool.budget} "
            raise Refused("upload_budget", detail + "bytes); retry later")
        self.held = size
        HELD.set(self.spool.held)


class SolvePool:
    def __init__(self, settings: Settings) -> None:
        self.limits = Limits(
            default_time_limit=settings.default_time_limit,
            max_time_limit=settings.max_time_limit,
            threads=settings.solver_threads,
            allow_verbose=settings.allow_verbose,
            grace=settings.stop_grace_seconds,
        )
        budget = settings.upload_budget_bytes
        self.spool = Spool(settings.spool_dir or default_location(budget), budget)
        self.load = Load(0, settings.workers + settings.queue_size, settings.workers)
        self.workers = Supervisor(
            settings.workers,
            self.limits,
            self.spool,
            settings.worker_max_rss_bytes,
            preload=tuple(sorted(DECLARED_IN)),
        )
        WORKERS.set(settings.workers)

    @property
    def ready(self) -> bool:
        """Every configured worker warm and alive, and not shutting down."""
        return not self.workers.draining and self.workers.ready >= self.load.workers

    @contextmanager
    def admitted(self, declared: int | None) -> Iterator[Ticket]:
        """A place for one request and its body (`declared`: its Content-Length), or `Refused`."""
        if self.workers.draining:
            raise Refused("shutting_down", "the service is shutting down; retry elsewhere")
        if self.load.saturated:
            raise Refused("saturated", "every solver is busy and the queue is full; retry later")
        ticket = Ticket(self.spool)
        self._admit(+1)
        try:
            if declared is not None:
                ticket.hold(declared)
                if declared > SPOOL_BYTES and not self.spool.has_room(declared):
                    detail = f"no room in the spool for a body of {declared} bytes; retry later"
                    raise Refused("spool_full", detail)
            yield ticket
        finally:
            self.spool.release(ticket.held)
            HELD.set(self.spool.held)
            self._admit(-1)

    async def run(
        self, body: bytes | str, gone: Callable[[], Awaitable[bool]], task: Endpoint[Any]
    ) -> RenderedResponse:
        """Run `task` (an endpoint's work: the solve, a round, a compare) on `body` (bytes, or
        a spool file's path) in a worker; `gone` tells whether the client has left."""
        job = self.workers.submit(task, body)
        waiting = asyncio.wrap_future(job.future)
        try:
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=POLL_SECONDS)
                if done:
                    return waiting.result()
                if await gone():
                    self._abandon(job)
                    return RenderedResponse(499, b"", MEDIA_TYPE, {"status": "cancelled"})
        except asyncio.CancelledError:  # the server stopped waiting: its shutdown bound passed
            self._abandon(job)
            raise

    def _abandon(self, job: Job) -> None:
        """End `job`'s work (its worker's process group, if it started) and remove the answer
        file it may still produce, which nobody will send."""
        self.workers.stop(job)
        job.future.add_done_callback(_discard_answer)

    def _admit(self, step: int) -> None:
        self.load.admitted += step
        IN_FLIGHT.set(self.load.admitted)
        QUEUED.set(self.load.queued)

    def drain(self) -> None:
        self.workers.drain()

    def close(self, timeout: float) -> None:
        """Let running solves end (they are bounded by their limits), stop every process and
        remove the spool folder."""
        self.workers.close(timeout)
        self.spool.close()


def _discard_answer(done: Future[RenderedResponse]) -> None:
    path = done.result().path
    if path is not None:
        Path(path).unlink(missing_ok=True)
