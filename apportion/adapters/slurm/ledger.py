"""The adapter's own state: the seconds each job has run per GPU type, as it observed them.

Slurm without accounting keeps no history of where a job ran, so the adapter counts it: at
every observation, each running job gets the time since the previous observation (or since
Slurm started it, when later) on the GPU type it runs on. The file is JSON,

    {"version": 1, "updated": <seconds since the epoch>, "received": {job: {type: seconds}}}

written to a temporary file next to it and renamed over it, so a crash never leaves half a
file. After a restart the gap is counted as well (a job that ran through it has run since
max(updated, its start)); what ran and stopped inside the gap is lost. A missing or malformed
file is rebuilt from the jobs running now (each with the time since Slurm started it), with a
warning naming what was wrong.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apportion.adapters.slurm.slurmcli import SlurmJob
from apportion.solver.errors import InputError

VERSION = 1
#: How far in the future a file's `updated` may lie (clock steps) before it is distrusted.
CLOCK_SLACK = 60.0

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _File(BaseModel):
    """The state file's schema (checked on load; errors name the field)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1]
    updated: Seconds
    received: dict[str, dict[str, Seconds]]


@dataclass(frozen=True)
class Ledger:
    """Seconds received per job per GPU type, as of `updated` (seconds since the epoch)."""

    updated: float
    received: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def rebuilt(cls, jobs: Iterable[SlurmJob], now: float) -> Ledger:
        """What can be known without history: each running job's time since Slurm started it
        on the type it runs on."""
        return cls(updated=now).observe(jobs, now, since=0.0)

    def observe(self, jobs: Iterable[SlurmJob], now: float, since: float | None = None) -> Ledger:
        """The ledger at `now`: running jobs gain the time they ran since the last observation
        (`since`, default `updated`); jobs Slurm no longer lists are dropped."""
        since = self.updated if since is None else since
        received: dict[str, dict[str, float]] = {}
        for job in jobs:
            mine = dict(self.received.get(job.id, {}))
            if job.running and job.running_type is not None:
                ran = now - max(since, job.start_time)
                if ran > 0:
                    mine[job.running_type] = mine.get(job.running_type, 0.0) + ran
            if mine:  # kept while Slurm lists the job (a requeued job passes through COMPLETING)
                received[job.id] = mine
        return Ledger(updated=now, received=received)

    def to_json(self) -> dict[str, object]:
        return {"version": VERSION, "updated": self.updated, "received": self.received}


@dataclass(frozen=True)
class Loaded:
    """A ledger as loaded: `problem` says why it was rebuilt (None when the file was good)."""

    ledger: Ledger
    problem: str | None = None


def load(path: Path, jobs: Iterable[SlurmJob], now: float | None = None) -> Loaded:
    """The ledger in `path`, or one rebuilt from the running `jobs` when the file is missing
    or malformed (`problem` then names the field and the reason)."""
    now = time.time() if now is None else now
    jobs = list(jobs)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return Loaded(Ledger.rebuilt(jobs, now), f"{path}: no state file yet")
    except OSError as exc:
        return Loaded(Ledger.rebuilt(jobs, now), f"{path}: cannot read ({exc.strerror})")
    try:
        data = _File.model_validate_json(text)
    except ValidationError as exc:
        problem = InputError.from_validation(exc, ("state",)).one_line()
        return Loaded(Ledger.rebuilt(jobs, now), f"{path}: {problem}")
    if data.updated > now + CLOCK_SLACK:
        msg = f"{path}: state.updated: {data.updated:.0f} is in the future (now {now:.0f})"
        return Loaded(Ledger.rebuilt(jobs, now), msg)
    return Loaded(Ledger(updated=data.updated, received=data.received))


def save(path: Path, ledger: Ledger) -> None:
    """Write the ledger atomically: a temporary file in the same directory, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w") as out:
            json.dump(ledger.to_json(), out, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def totals(received: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Seconds per job over all types (for logs)."""
    return {job: round(sum(per.values()), 1) for job, per in received.items()}
