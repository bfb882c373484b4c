"""A round's Ray calls made at once: each blocks on the GCS (a placement group, a named actor
and its name check are a round trip each), so one after another they cost a round seconds at
scale, while the GCS answers many at a time.

Calls run on a few threads. Calls for one job run in the order they were submitted, the later
only when the earlier succeeded (a moved job's new group is created once its old one is
removed, never while its entrypoint may still be checkpointing); calls for different jobs run
concurrently. `finish` waits for all of them and says how each ended: the round is enacted
when it returns, and nothing is in flight when the next round reads Ray.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from apportion.adapters.framework.integration import Command

#: Threads making Ray calls (the GCS is the bound: more add contention, not speed).
WORKERS = 8


@dataclass(frozen=True)
class Ended:
    """How one call ended: `error` is None when it succeeded, else one line."""

    job: str
    command: Command
    error: str | None = None


class InFlight:
    """The calls submitted since the last `finish`."""

    def __init__(self, workers: int = WORKERS) -> None:
        self.workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._calls: list[tuple[str, Command, Future[None]]] = []
        self._last: dict[str, Future[None]] = {}

    def __len__(self) -> int:
        return len(self._calls)

    def submit(self, job: str, command: Command, call: Callable[[], None]) -> None:
        """Run `call` (`command` of `job`) after the job's earlier calls, if they succeeded."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="apportion-ray")
        # The pool takes calls in order, so an earlier call has a thread before its job's
        # next one waits for it: no wait can starve the call it waits for.
        future = self._pool.submit(_after, self._last.get(job), call)
        self._last[job] = future
        self._calls.append((job, command, future))

    def finish(self) -> list[Ended]:
        """Wait for every call; how each ended, in submission order."""
        calls, self._calls, self._last = self._calls, [], {}
        ended = []
        for job, command, future in calls:
            try:
                future.result()
                ended.append(Ended(job, command))
            except Exception as exc:  # RayError, or a bug: either way that call did not happen
                ended.append(Ended(job, command, _one_line(exc)))
        return ended

    def close(self) -> list[Ended]:
        """`finish`, then end the threads."""
        ended = self.finish()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        return ended


class NotRun(RuntimeError):
    """A call skipped because an earlier call for its job failed."""


def _after(before: Future[None] | None, call: Callable[[], None]) -> None:
    if before is not None and before.exception() is not None:
        raise NotRun(f"not run: the job's previous command failed ({before.exception()})")
    call()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__
