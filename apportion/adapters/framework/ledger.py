"""The adapter's own state: the seconds each job has run per GPU type, as it observed them,
and the holds it placed.

Schedulers rarely keep a history of where a job ran (Slurm without accounting keeps none), so
the adapter counts it: at every observation, each running job gets the time since the previous
observation (or since the scheduler started it, when later) on the GPU type it runs on. The
file is JSON,

    {"version": 1, "updated": <seconds since the epoch>, "received": {job: {type: seconds}},
     "holds": {job: the scheduler's word for the hold, "" until seen}, "known": [job, ...],
     "steps": {job: {"steps": N, "received": {type: seconds}}}, "estimate": {...} or null}

`holds` are the jobs the adapter holds (it held them, or found them held when it first saw
them: held at submission for it to start), `known` the jobs the scheduler listed at the last
observation; a held job that is neither is held by someone else (`holds`, module). `steps`
and `estimate` are what the adapter learns from the progress jobs report (`learning`): each
reporting job's baseline and the estimate document; both optional, so older files load.

The file is written to a temporary file next to it and renamed over it, so a crash never
leaves half a file, and each good file is also kept as `<file>.last-good`. After a restart the
gap is counted as well (a job that ran through it has run since max(updated, its start)); what
ran and stopped inside the gap is lost. A missing file (and no last good copy: a first start)
is rebuilt from the jobs running now (each with the time since it started). A file that cannot
be read, or is malformed, or was lost while its last good copy remains, is `fatal`: the
controller then acts on nothing until the operator restores the copy or asks for a rebuild.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from apportion.adapters.framework.integration import Seen, SetupError
from apportion.solver.errors import InputError

VERSION = 1
#: How far in the future a file's `updated` may lie (clock steps) before it is distrusted.
CLOCK_SLACK = 60.0

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    steps: Seconds  # a count of steps: finite and non-negative as seconds are
    received: dict[str, Seconds]


class _File(BaseModel):
    """The state file's schema (checked on load; errors name the field)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1]
    updated: Seconds
    received: dict[str, dict[str, Seconds]]
    holds: dict[str, str] = {}
    known: list[str] = []
    steps: dict[str, _Baseline] = {}
    estimate: dict[str, Any] | None = None


@dataclass(frozen=True)
class Ledger:
    """Seconds received per job per GPU type, as of `updated` (seconds since the epoch)."""

    updated: float
    received: dict[str, dict[str, float]] = field(default_factory=dict)
    holds: dict[str, str] = field(default_factory=dict)
    known: frozenset[str] = frozenset()
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    estimate: dict[str, Any] | None = None

    @classmethod
    def rebuilt(cls, jobs: Iterable[Seen], now: float) -> Ledger:
        """What can be known without history: each running job's time since it started, on
        the type it runs on."""
        return cls(updated=now).observe(jobs, now, since=0.0)

    def observe(self, jobs: Iterable[Seen], now: float, since: float | None = None) -> Ledger:
        """The ledger at `now`: running jobs gain the time they ran since the last observation
        (`since`, default `updated`); jobs the scheduler no longer lists are dropped."""
        since = self.updated if since is None else since
        jobs = list(jobs)
        received: dict[str, dict[str, float]] = {}
        for job in jobs:
            mine = dict(self.received.get(job.id, {}))
            if job.gpu_type is not None:
                ran = now - max(since, job.started)
                if ran > 0:
                    mine[job.gpu_type] = mine.get(job.gpu_type, 0.0) + ran
            if mine:  # kept while listed (a requeued Slurm job passes through COMPLETING)
                received[job.id] = mine
        listed = frozenset(job.id for job in jobs)
        holds = {j: why for j, why in self.holds.items() if j in listed}
        steps = {j: base for j, base in self.steps.items() if j in listed}
        return Ledger(now, received, holds, listed, steps, self.estimate)

    def with_holds(self, holds: Mapping[str, str]) -> Ledger:
        return replace(self, holds=dict(holds))

    def with_learned(self, steps: dict[str, dict[str, Any]], estimate: dict[str, Any]) -> Ledger:
        return replace(self, steps=steps, estimate=estimate)

    def to_json(self) -> dict[str, object]:
        return {
            "version": VERSION,
            "updated": self.updated,
            "received": self.received,
            "holds": self.holds,
            "known": sorted(self.known),
            "steps": self.steps,
            "estimate": self.estimate,
        }


@dataclass(frozen=True)
class Loaded:
    """A ledger as loaded: `problem` says why it was rebuilt (None when the file was good);
    `fatal` that the file exists (or existed) but cannot be used: history would be lost."""

    ledger: Ledger
    problem: str | None = None
    fatal: bool = False


class StateError(SetupError):
    """The state file cannot be used and no rebuild was asked for; one line saying why and
    how to recover."""


def last_good(path: Path) -> Path:
    """Where the last good copy of the state file `path` is kept."""
    return path.with_name(f"{path.name}.last-good")


def load(path: Path, jobs: Iterable[Seen], now: float | None = None) -> Loaded:
    """The ledger in `path`, or one rebuilt from the running `jobs` when the file is missing
    or malformed (`problem` then names the field and the reason)."""
    now = time.time() if now is None else now
    jobs = list(jobs)
    problem = _problem(path, now)
    if isinstance(problem, Ledger):
        return Loaded(problem)
    missing = not path.exists() and not last_good(path).exists()
    return Loaded(Ledger.rebuilt(jobs, now), problem, fatal=not missing)


def _problem(path: Path, now: float) -> Ledger | str:
    """The file's ledger, or what is wrong with it."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        if last_good(path).exists():
            return f"{path}: the state file is gone, but its last good copy remains"
        return f"{path}: no state file yet"
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror})"
    try:
        data = _File.model_validate_json(text)
    except ValidationError as exc:
        return f"{path}: {InputError.from_validation(exc, ('state',)).one_line()}"
    if data.updated > now + CLOCK_SLACK:
        return f"{path}: state.updated: {data.updated:.0f} is in the future (now {now:.0f})"
    steps = {j: b.model_dump() for j, b in data.steps.items()}
    known = frozenset(data.known)
    return Ledger(data.updated, data.received, data.holds, known, steps, data.estimate)


def refusal(path: Path, problem: str) -> str:
    """The one line an adapter stops with when its state file cannot be used."""
    copy = last_good(path)
    if copy.exists():
        saved = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(copy.stat().st_mtime))
        recover = (
            f"restore the last good copy (saved {saved}) with `cp {copy} {path}`, or start "
            "afresh with --rebuild-state"
        )
    else:
        recover = "start afresh with --rebuild-state"
    return (
        f"the state file is unusable, so nothing was done ({problem}); {recover} (each job's "
        "received time is then rebuilt from the running jobs)"
    )


def check(path: Path) -> None:
    """`StateError` when the state file at `path` cannot be used (before any round)."""
    problem = _problem(path, time.time())
    if isinstance(problem, str) and (path.exists() or last_good(path).exists()):
        raise StateError(refusal(path, problem))


def save(path: Path, ledger: Ledger) -> None:
    """Write the ledger atomically (a temporary file in the same directory, then a rename),
    and the same as the last good copy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(ledger.to_json(), sort_keys=True)
    for target in (path, last_good(path)):
        _write(target, text)


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def totals(received: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Seconds per job over all types (for logs)."""
    return {job: round(sum(per.values()), 1) for job, per in received.items()}
