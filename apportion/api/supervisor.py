"""The solver processes, and the one thread that looks after them.

The thread waits on every worker's pipe and every worker's process handle at once, so it learns
of a death the moment it happens, whether the worker was busy or idle. Then it ends the dead
worker's process group (anything the worker started, such as PuLP's CBC, goes with it),
removes its folders, answers the request it was running (500; 504 when the time-limit alarm
ended it) and starts a replacement. A request goes to a worker only once the worker is warm,
and counts as started only once the worker confirms it took it: one that a worker never took
goes back to the front of the queue. A worker whose resident memory stays above `max_rss`
after a request, having given back what it could, is replaced.

Other threads only append to the queue or set flags, then wake the thread through a pipe;
everything else is the thread's own.

Not a library pool: concurrent.futures' breaks for good when any worker dies, and pebble's when
one dies while no request is running (every later request then failed); neither ends what a
worker started nor knows when its processes are warm.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

import structlog
from prometheus_client import Counter, Gauge

from apportion.api.child import Task, serve
from apportion.api.problems import MEDIA_TYPE, Refused, problem_body
from apportion.api.spool import FOLDER, Spool
from apportion.api.worker import Limits, RenderedResponse

log = structlog.get_logger("apportion.workers")
READY = Gauge("apportion_workers_ready", "Solver processes warm and alive")
ENDED = Counter("apportion_worker_ends_total", "Solver processes ended, by reason", ["reason"])
#: A replacement that fails to start waits this long, doubling up to `MAX_BACKOFF`.
BACKOFF = 0.5
MAX_BACKOFF = 10.0
#: The signals that end a worker from outside (kill, an orchestrator, the out-of-memory killer);
#: a solver's own failure is an abort, a fault or an exit code (500).
STOPPED_FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM})
_SPAWN = multiprocessing.get_context("spawn")  # no copy of the server's threads in a worker


@dataclass(eq=False)
class Job:
    task: Task
    body: bytes | str
    future: Future[RenderedResponse] = field(default_factory=Future)
    stop: bool = False  # its client left, or the server gave up on it: end it


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    folders: tuple[Path, Path]  # its temporary files, its answers in the spool
    ready: bool = False
    job: Job | None = None
    took: bool = False  # it confirmed it took `job`
    retiring: bool = False  # ended on purpose (memory, shutdown): not a failure


class Supervisor:
    def __init__(
        self, size: int, limits: Limits, spool: Spool, max_rss: int, preload: tuple[str, ...] = ()
    ) -> None:
        self.size = size
        self.ready = 0  # warm and alive, read by /readyz
        self.draining = False
        self._limits, self._spool, self._max_rss = limits, spool, max_rss
        self._preload = preload  # modules a worker imports while warming up
        self._workers: list[_Worker | None] = [None] * size
        self._queue: deque[Job] = deque()
        self._lock = threading.Lock()
        self._failures = 0
        self._retry_at = 0.0
        self._closed = False
        self._quiet = threading.Event()  # draining and no request running
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._thread = threading.Thread(target=self._loop, name="apportion-workers", daemon=True)
        self._thread.start()
        atexit.register(self.close, 0.0)

    # -- called from other threads -----------------------------------------------------------

    def submit(self, task: Task, body: bytes | str) -> Job:
        job = Job(task, body)
        with self._lock:
            if self.draining:
                raise Refused("shutting_down", "the service is shutting down; retry elsewhere")
            if self.ready == 0 and self._failures > 0:
                detail = "no solver process is running (restarting); retry later"
                raise Refused("no_workers", detail)
            self._queue.append(job)
        self._wake()
        return job

    def stop(self, job: Job) -> None:
        job.stop = True
        self._wake()

    def drain(self) -> None:
        """Take no more requests; answer those waiting at once; let running ones end."""
        self.draining = True
        self._wake()

    def close(self, timeout: float) -> None:
        """Drain, give running requests `timeout` seconds, then end every process."""
        self.drain()
        self._quiet.wait(timeout)
        self._closed = True
        self._wake()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=30)
        self._end_all()
        atexit.unregister(self.close)

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"!")

    # -- the thread --------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._closed:
            try:
                self._step()
            except Exception:  # a defect here must not leave the service without workers
                log.exception("supervisor")
                time.sleep(BACKOFF)
        self._end_all()

    def _step(self) -> None:
        self._start_missing()
        self._assign()
        waitables: list[Any] = [self._wake_r]
        for worker in self._live():
            waitables += [worker.conn, worker.process.sentinel]
        ready = wait(waitables, timeout=self._timeout())
        if self._wake_r in ready:
            os.read(self._wake_r, 4096)
        for worker in self._live():
            self._attend(worker, ready)
        self._stop_and_drain()

    def _live(self) -> list[_Worker]:
        return [w for w in self._workers if w is not None]

    def _timeout(self) -> float | None:
        if None in self._workers and not self.draining:
            return max(self._retry_at - time.monotonic(), 0.0)
        return None

    def _start_missing(self) -> None:
        if self.draining or time.monotonic() < self._retry_at:
            return
        for slot, worker in enumerate(self._workers):
            if worker is None:
                try:
                    self._workers[slot] = self._start()
                except Exception:  # out of processes or memory, or a broken installation
                    log.exception("worker_start_failed")
                    self._failed_start()
                    return

    def _start(self) -> _Worker:
        temporary = Path(tempfile.mkdtemp(prefix=FOLDER.format(pid=os.getpid()) + "tmp-"))
        answers = self._spool.worker_folder()
        ours, theirs = _SPAWN.Pipe()
        args = (theirs, self._limits, str(temporary), str(answers), self._preload)
        process = _SPAWN.Process(target=serve, args=args, name="apportion-solver", daemon=True)
        try:
            process.start()
        except BaseException:
            _remove((temporary, answers))
            raise
        finally:
            theirs.close()  # so a dead worker's pipe reads as closed here
        return _Worker(process, ours, (temporary, answers))

    def _failed_start(self) -> None:
        self._failures += 1
        self._retry_at = time.monotonic() + min(BACKOFF * 2 ** (self._failures - 1), MAX_BACKOFF)

    def _assign(self) -> None:
        for worker in self._live():
            if not worker.ready or worker.job is not None or worker.retiring:
                continue
            job = self._next_job()
            if job is None:
                return
            worker.job, worker.took = job, False
            try:
                worker.conn.send((job.task, job.body))
            except (OSError, ValueError):
                self._ended(worker)  # it died idle: the job was never taken, so it waits again

    def _next_job(self) -> Job | None:
        with self._lock:
            while self._queue:
                job = self._queue.popleft()
                if not job.stop:
                    return job
        return None

    def _attend(self, worker: _Worker, ready: list[Any]) -> None:
        """Read what `worker` sent, then handle its end if it has ended."""
        if worker.conn in ready or worker.process.sentinel in ready:
            try:
                while worker.conn.poll():
                    self._message(worker, worker.conn.recv())
            except (EOFError, OSError):
                self._ended(worker)
                return
        if worker.process.sentinel in ready:
            self._ended(worker)

    def _message(self, worker: _Worker, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "ready":
            worker.ready, self._failures = True, 0
            self._count_ready()
        elif kind == "took":
            worker.took = True
        elif kind == "answer" and worker.job is not None:
            answer, rss = message[1], message[2]
            if answer.path is not None:
                try:
                    answer = _with_path(answer, self._spool.adopt(answer.path))
                except OSError:
                    answer = _refused_answer("the answer could not be kept; retry later")
            if rss > self._max_rss:  # before answering: once the client has it, /readyz knows
                self._retire(worker, "memory")
            job, worker.job = worker.job, None
            _settle(job, answer)

    def _retire(self, worker: _Worker, reason: str) -> None:
        worker.retiring = True
        ENDED.labels(reason).inc()
        _kill(worker.process)
        self._count_ready()

    def _ended(self, worker: _Worker) -> None:
        """`worker` is gone: end its group, clean up, answer or requeue its request."""
        # While it is unreaped its group id cannot be reused: what it started (CBC) and what
        # survived it go now.
        _kill(worker.process)
        worker.process.join(timeout=5)
        worker.conn.close()
        _remove(worker.folders)
        self._workers[self._workers.index(worker)] = None
        code = worker.process.exitcode
        if not worker.ready and not worker.retiring:
            self._failed_start()
        elif not worker.retiring:
            ENDED.labels("time_limit" if code == -signal.SIGALRM else "died").inc()
        self._count_ready()  # before answering, as for a retired worker
        job = worker.job
        log.warning("worker_ended", pid=worker.process.pid, exit_code=code, running=bool(job))
        if job is not None and not worker.took and not job.stop:
            with self._lock:
                self._queue.appendleft(job)
        elif job is not None:
            _settle(job, _ended_answer(job, code))

    def _stop_and_drain(self) -> None:
        for worker in self._live():
            if worker.job is not None and worker.job.stop and not worker.retiring:
                self._retire(worker, "cancelled")
        if not self.draining:
            return
        with self._lock:
            waiting, self._queue = list(self._queue), deque()
        for job in waiting:
            _settle(job, _refused_answer("the service is shutting down; retry elsewhere"))
        if not any(w.job is not None for w in self._live()):
            self._quiet.set()

    def _count_ready(self) -> None:
        self.ready = sum(1 for w in self._live() if w.ready and not w.retiring)
        READY.set(self.ready)

    def _end_all(self) -> None:
        """End every worker now (shutdown, or the interpreter exiting)."""
        for worker in self._live():
            worker.retiring = True
            _kill(worker.process)
        for worker in self._live():
            worker.process.join(timeout=5)
            worker.conn.close()
            _remove(worker.folders)
            if worker.job is not None:
                _settle(worker.job, _refused_answer("the service stopped before this request"))
        self._workers = [None] * self.size
        self.ready = 0


def _kill(process: BaseProcess) -> None:
    """SIGKILL the worker's process group, and the worker itself should it not lead one yet."""
    if process.pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    if process.exitcode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)


def _remove(folders: tuple[Path, ...]) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)


def _settle(job: Job, answer: RenderedResponse) -> None:
    with contextlib.suppress(InvalidStateError):
        job.future.set_result(answer)


def _with_path(answer: RenderedResponse, path: str) -> RenderedResponse:
    return RenderedResponse(answer.status_code, answer.body, answer.media_type, answer.meta, path)


def _ended_answer(job: Job, exitcode: int | None) -> RenderedResponse:
    if job.stop:
        return RenderedResponse(499, b"", MEDIA_TYPE, {"status": "cancelled"})
    if exitcode == -signal.SIGALRM:
        detail = "the solve did not end within its time limit and its process was stopped"
        return RenderedResponse(504, problem_body(504, detail), MEDIA_TYPE, {"status": "stopped"})
    if exitcode is not None and -exitcode in STOPPED_FROM_OUTSIDE:
        # An operator, an orchestrator or the kernel's out-of-memory killer ended it, not a
        # defect the request met: a retry goes to a fresh process.
        name = signal.Signals(-exitcode).name
        detail = f"the solver process running this request was stopped from outside ({name}); "
        detail += "retry later (with a smaller request, should it happen again)"
        return RenderedResponse(503, problem_body(503, detail), MEDIA_TYPE, {"status": "killed"})
    detail = f"the solver process ended abnormally (exit code {exitcode}); retry or "
    detail += "change the request (other requests were not affected)"
    return RenderedResponse(500, problem_body(500, detail), MEDIA_TYPE, {"status": "crashed"})


def _refused_answer(detail: str) -> RenderedResponse:
    return RenderedResponse(503, problem_body(503, detail), MEDIA_TYPE, {"status": "refused"})
