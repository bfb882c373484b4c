"""The solver processes: a bounded pool with admission control, cancellation and isolation.

- At most `workers` solves run at once and `queue_size` more wait; beyond that a request is
  refused at once (503 + Retry-After) instead of queueing without bound.
- A solve whose client goes away is cancelled: its process is ended within `POLL_SECONDS` and a
  fresh one takes its place (a native solve cannot be interrupted from another thread).
- A process that dies (a solver's abort, the time-limit alarm of `api.worker`) costs that one
  request a problem answer; the pool replaces it and everyone else goes on.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pebble import ProcessExpired, ProcessPool
from prometheus_client import Gauge

from apportion.api.problems import MEDIA_TYPE, problem_body
from apportion.api.settings import Settings
from apportion.api.worker import Answer, Limits, solve_body, warm_up

POLL_SECONDS = 0.25  # how often a waiting request checks that its client is still there
IN_FLIGHT = Gauge("apportion_in_flight", "Requests being solved or waiting for a worker")
QUEUED = Gauge("apportion_queue_depth", "Requests waiting for a worker")
WORKERS = Gauge("apportion_workers", "Solver processes")


class Saturated(Exception):
    """Every worker is busy and the queue is full."""


@dataclass
class Load:
    admitted: int = 0  # running + waiting
    capacity: int = 0
    workers: int = 0

    @property
    def queued(self) -> int:
        return max(self.admitted - self.workers, 0)

    @property
    def saturated(self) -> bool:
        return self.admitted >= self.capacity


class SolvePool:
    def __init__(self, settings: Settings) -> None:
        self.limits = Limits(
            default_time_limit=settings.default_time_limit,
            max_time_limit=settings.max_time_limit,
            threads=settings.solver_threads,
            allow_verbose=settings.allow_verbose,
            grace=settings.stop_grace_seconds,
        )
        self.load = Load(0, settings.workers + settings.queue_size, settings.workers)
        # Spawned, not forked: the service's threads (event loop, solver thread pools) must not
        # be copied into a child mid-flight.
        self._pool = ProcessPool(
            max_workers=settings.workers,
            initializer=warm_up,
            context=multiprocessing.get_context("spawn"),
        )
        WORKERS.set(settings.workers)

    async def run(
        self,
        body: bytes | str,
        gone: Callable[[], Awaitable[bool]],
        task: Callable[[bytes | str, Limits], Answer] = solve_body,
    ) -> Answer:
        """Run `task` (a module-level function of `api.worker`: the solve, or a round) on `body`
        (bytes, or a spool file's path) in a worker; `gone` tells whether the client has left."""
        if self.load.saturated:
            raise Saturated
        self._admit(+1)
        try:
            future = self._pool.schedule(task, args=(body, self.limits))
            waiting = asyncio.wrap_future(future)
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=POLL_SECONDS)
                if done:
                    return _answer(waiting)
                if await gone():
                    future.cancel()  # ends the worker process if the solve has started
                    return Answer(499, b"", MEDIA_TYPE, {"status": "cancelled"})
        finally:
            self._admit(-1)

    def _admit(self, step: int) -> None:
        self.load.admitted += step
        IN_FLIGHT.set(self.load.admitted)
        QUEUED.set(self.load.queued)

    def close(self, timeout: float) -> None:
        """Let running solves end (they are bounded by their limits), then stop the pool."""
        self._pool.close()
        self._pool.join(timeout=timeout)
        self._pool.stop()
        self._pool.join(timeout=5)


def _answer(waiting: asyncio.Future[Answer]) -> Answer:
    try:
        return waiting.result()
    except ProcessExpired as ended:
        if ended.exitcode == -signal.SIGALRM:
            detail = "the solve did not end within its time limit and its process was stopped"
            return Answer(504, problem_body(504, detail), MEDIA_TYPE, {"status": "stopped"})
        detail = f"the solver process ended abnormally (exit code {ended.exitcode}); retry or "
        detail += "change the request (other requests were not affected)"
        return Answer(500, problem_body(500, detail), MEDIA_TYPE, {"status": "crashed"})
    except Exception as exc:  # a defect in the worker: answer it, keep serving
        detail = f"internal error in the solver process: {type(exc).__name__}"
        return Answer(500, problem_body(500, detail), MEDIA_TYPE, {"status": "error"})
