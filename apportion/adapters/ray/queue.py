"""The adapter's job queue, kept in SQLite: what users submit, and what became of it.

Ray core has no queue of jobs that wait for GPUs, so the adapter keeps one. A row per job:
its GPU count, its key in the throughput table, its weight, the entrypoint (a shell command
line) and the directory it runs in, and its state:

- `queued`: waiting for a round (never started, or preempted back into the queue);
- `running`: a round started it (Ray's placement groups say where it really runs: the adapter
  reads them back, this row only records when and how often it was started);
- `done` / `failed`: its entrypoint exited with 0 / another code (kept, with the code);
- `cancelled`: a user took it off the queue.

Every change is one transaction (the adapter's changes of a round, one for them all: `batch`),
so a killed adapter or submitter leaves each row as before or after, never half; the file may
be shared by the adapter and any number of submitters (WAL: readers never wait for the
writer). Queues are named: one file may hold the queues of
several adapters, each scheduling only its own.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: States of a job that is still the adapter's to schedule.
ACTIVE = ("queued", "running")
STATES = ("queued", "running", "done", "failed", "cancelled")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    queue TEXT NOT NULL,
    key TEXT NOT NULL,
    gpus INTEGER NOT NULL CHECK (gpus > 0),
    weight REAL NOT NULL CHECK (weight > 0),
    entrypoint TEXT NOT NULL,
    cwd TEXT,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
    submitted REAL NOT NULL,
    started REAL,
    ended REAL,
    starts INTEGER NOT NULL DEFAULT 0,
    gpu_type TEXT,
    placement TEXT,
    exit_code INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_by_queue ON jobs (queue, state);
"""


class QueueError(ValueError):
    """A submission or change the queue refuses; the message names the field and the reason."""


@dataclass(frozen=True)
class QueuedJob:
    """One row of the queue (`placement`: node → GPUs where a round last started it)."""

    id: str
    queue: str
    key: str
    gpus: int
    weight: float
    entrypoint: str
    cwd: str | None
    state: str
    submitted: float
    started: float | None = None
    ended: float | None = None
    starts: int = 0
    gpu_type: str | None = None
    placement: Mapping[str, int] | None = None
    exit_code: int | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE


class JobQueue:
    """The named queue `queue` in the SQLite file `path` (created when missing)."""

    def __init__(self, path: Path, queue: str = "default") -> None:
        if not queue or any(c in queue for c in " /,:"):
            raise QueueError(f"queue: {queue!r} must be one word without ' ', '/', ',', ':'")
        self.path, self.queue = Path(path), queue
        self._batched = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL with NORMAL: a killed process loses no commit; a power cut may lose the last.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise QueueError(f"queue file {self.path}: {exc}") from None

    def close(self) -> None:
        self._db.close()

    def submit(
        self,
        key: str,
        gpus: int,
        entrypoint: str,
        *,
        weight: float = 1.0,
        cwd: str | None = None,
    ) -> QueuedJob:
        """Append a job; `QueueError` naming the field when it is not one a round can run."""
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
            raise QueueError(f"gpus: {gpus!r} must be a whole number of GPUs, at least 1")
        if not key.strip():
            raise QueueError("model: must name a row of the throughput table (non-empty)")
        if not entrypoint.strip():
            raise QueueError("entrypoint: the command the job runs must not be empty")
        if not (isinstance(weight, int | float) and math.isfinite(weight) and weight > 0):
            raise QueueError(f"weight: {weight!r} must be a positive number")
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO jobs (queue, key, gpus, weight, entrypoint, cwd, state, submitted)"
                " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?)",
                (self.queue, key.strip(), gpus, float(weight), entrypoint, cwd, time.time()),
            )
            job_id = str(cursor.lastrowid)
        return self.get(job_id)

    def get(self, job_id: str) -> QueuedJob:
        row = self._db.execute(
            "SELECT * FROM jobs WHERE id = ? AND queue = ?", (_number(job_id), self.queue)
        ).fetchone()
        if row is None:
            raise QueueError(f"job {job_id}: no such job in queue {self.queue!r}")
        return _job(row)

    def jobs(self, states: tuple[str, ...] = STATES) -> list[QueuedJob]:
        """The queue's jobs in these states, in submission order."""
        marks = ",".join("?" * len(states))
        rows = self._db.execute(
            f"SELECT * FROM jobs WHERE queue = ? AND state IN ({marks}) ORDER BY id",
            (self.queue, *states),
        )
        return [_job(row) for row in rows]

    def started(self, job_id: str, gpu_type: str, placement: Mapping[str, int]) -> None:
        """A round started the job on `placement` of `gpu_type`."""
        self._update(
            job_id,
            "state = 'running', started = ?, starts = starts + 1, gpu_type = ?, placement = ?",
            (time.time(), gpu_type, json.dumps(dict(placement))),
        )

    def adopt(self, job_id: str, start: int, gpu_type: str, placement: Mapping[str, int]) -> None:
        """Ray holds the job's `start`-th group though the queue did not record that start
        (an adapter killed in between): record it, so no later start reuses its number."""
        changes = "state = 'running', started = ?, starts = ?, gpu_type = ?"  # started: when seen
        values = (time.time(), start, gpu_type, json.dumps(dict(placement)))
        self._update(job_id, f"{changes}, placement = ?", values, only=ACTIVE, fewer=start)

    def requeued(self, job_id: str) -> None:
        """Back in the queue: preempted, or found without its placement group."""
        self._update(job_id, "state = 'queued'", (), only=("running",))

    def ended(self, job_id: str, exit_code: int) -> None:
        """Its entrypoint exited (`done` with 0, `failed` otherwise)."""
        state = "done" if exit_code == 0 else "failed"
        changes = "state = ?, ended = ?, exit_code = ?"
        self._update(job_id, changes, (state, time.time(), exit_code), only=ACTIVE)

    def cancel(self, job_id: str) -> QueuedJob:
        """Take a job off the queue (a running one is stopped by the adapter's next round)."""
        job = self.get(job_id)
        if not job.active:
            raise QueueError(f"job {job_id}: is {job.state}, not queued or running")
        self._update(job_id, "state = 'cancelled', ended = ?", (time.time(),), only=ACTIVE)
        return self.get(job_id)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The changes made within, one transaction: all of them, or none."""
        with self._transaction():
            self._batched = True
            try:
                yield
            finally:
                self._batched = False

    def _update(
        self,
        job_id: str,
        changes: str,
        values: tuple[object, ...],
        only: tuple[str, ...] = (),
        fewer: int | None = None,
    ) -> None:
        """`changes` to the job's row, if it is in a state of `only` (any when empty) and
        (with `fewer`) it has fewer starts than that."""
        guard = f" AND state IN ({','.join('?' * len(only))})" if only else ""
        guard += " AND starts < ?" if fewer is not None else ""
        more = () if fewer is None else (fewer,)
        with self._transaction() as db:
            db.execute(
                f"UPDATE jobs SET {changes} WHERE id = ? AND queue = ?{guard}",
                (*values, _number(job_id), self.queue, *only, *more),
            )

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self._batched:  # part of the batch's transaction
            yield self._db
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _number(job_id: str) -> int:
    if not str(job_id).isdigit():
        raise QueueError(f"job: {job_id!r} is not a job id (a whole number)")
    return int(job_id)


def _job(row: sqlite3.Row) -> QueuedJob:
    placement = json.loads(row["placement"]) if row["placement"] else None
    return QueuedJob(
        id=str(row["id"]),
        queue=row["queue"],
        key=row["key"],
        gpus=row["gpus"],
        weight=row["weight"],
        entrypoint=row["entrypoint"],
        cwd=row["cwd"],
        state=row["state"],
        submitted=row["submitted"],
        started=row["started"],
        ended=row["ended"],
        starts=row["starts"],
        gpu_type=row["gpu_type"],
        placement=placement,
        exit_code=row["exit_code"],
    )
