"""Throughputs learned from the progress jobs report (docs/ESTIMATION.md, "Observations from
Slurm jobs"): an integration that reads a job's cumulative steps (`Reports`) has its managed
jobs' rows replaced, round after round, by the estimate the progress tightens.

Each job that reports keeps a *baseline* in the state file: the steps it reported and the
seconds it had received per GPU type then. A round turns the difference into one observation,

    steps = steps now − steps then,   seconds = received now − received then (on that type),

only when the job gained time on exactly one GPU type (a moved job's steps cannot be split
between types) and its count did not go down (a requeued job counting from 0 again); either
way the baseline moves to now. The baseline moves only when the estimate call succeeds, so a
round whose call fails loses nothing: the next one observes the whole stretch. The estimate
document travels in the state file (the service keeps nothing); a job that never reported is
not in it and keeps its table row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import structlog

from apportion.adapters.framework.ledger import Ledger
from apportion.adapters.framework.view import Job, Managed
from apportion.client import Client, ServiceError
from apportion.solver.errors import InputError

#: A job's baseline: `{"steps": N, "received": {gpu_type: seconds}}`.
Baseline = dict[str, Any]


@runtime_checkable
class Reports(Protocol):
    """An integration whose jobs may report their progress, and the table it maps them to."""

    def progress(self, job: Job[Any]) -> float | None:
        """The job's cumulative steps as it reported them, or None when it reports none."""
        ...

    def reference(self) -> Mapping[str, Mapping[str, float]]:
        """The throughput table (key → GPU type → steps/s) the jobs' keys name rows of."""
        ...


@dataclass(frozen=True)
class Learned:
    """A round's learning: the rows to use, and the state to keep (None: keep the old)."""

    rows: dict[str, dict[str, float]]
    steps: dict[str, Baseline] | None = None
    estimate: dict[str, Any] | None = None
    error: str | None = None


def observations(
    before: Mapping[str, Baseline],
    reported: Mapping[str, float],
    received: Mapping[str, Mapping[str, float]],
) -> tuple[list[dict[str, Any]], dict[str, Baseline]]:
    """The observations since each job's baseline, and the new baselines (see the module)."""
    found: list[dict[str, Any]] = []
    after: dict[str, Baseline] = {}
    for job, steps in reported.items():
        now = {g: float(s) for g, s in received.get(job, {}).items()}
        after[job] = {"steps": float(steps), "received": now}
        base = before.get(job)
        if base is None or steps < base["steps"]:
            continue
        gained = {g: s - base["received"].get(g, 0.0) for g, s in now.items()}
        ran = [g for g, s in gained.items() if s > 0]
        if len(ran) == 1:
            seconds = gained[ran[0]]
            step = float(steps - base["steps"])
            found.append({"job": job, "gpu_type": ran[0], "steps": step, "seconds": seconds})
    return found, after


def user_reference(table: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The table as an estimation reference: each key a job type of scale factor 1."""
    types = sorted({g for row in table.values() for g in row})
    rows = [{"model": k, "scale_factor": 1, "throughput": dict(r)} for k, r in table.items()]
    return {"gpu_types": types, "job_types": rows}


def learn(
    client: Client,
    reports: Reports,
    jobs: list[Job[Any]],
    listed: set[str],
    received: Mapping[str, Mapping[str, float]],
    steps: Mapping[str, Baseline],
    estimate: Mapping[str, Any] | None,
) -> Learned:
    """Ask for the estimate with this round's observations; the rows of the jobs it holds.
    With no job reporting and no document, nothing is asked."""
    reported = {j.id: s for j in jobs if (s := reports.progress(j)) is not None}
    doc = dict(estimate) if estimate else None
    held = set(doc.get("jobs", {})) if doc else set()
    if not reported and not held:
        return Learned({})
    found, after = observations(steps, reported, received)
    keys = {j.id: j.key for j in jobs}
    request = {
        "estimate": doc,
        "reference": None if doc else user_reference(reports.reference()),
        "jobs": [{"id": j, "job_type": keys[j]} for j in sorted(reported) if j not in held],
        "observations": found,
        "forget": sorted(held - listed),
        "pairs": False,
    }
    try:
        answer = client.estimate(request)
    except InputError as exc:
        return Learned(_rows(doc), error=f"the estimate was refused: {exc.one_line()}")
    except ServiceError as exc:
        return Learned(_rows(doc), error=f"the estimate failed: {exc}")
    kept = {j: b for j, b in steps.items() if j in listed and j not in after}
    return Learned(answer.throughputs(), {**kept, **after}, answer.model_dump(mode="json"))


def learn_round(
    client: Client,
    reports: Reports,
    managed: Managed[Any],
    listed: set[str],
    received: Mapping[str, Mapping[str, float]],
    book: Ledger,
) -> tuple[Managed[Any], Ledger | None]:
    """One round's `learn` on the controller's ledger: the managed jobs with their rows, and
    the ledger to save (None: nothing learned). Any failure leaves the last rows in force."""
    log = structlog.get_logger("apportion.learning")
    try:
        got = learn(client, reports, managed.jobs, listed, received, book.steps, book.estimate)
    except Exception:  # the estimate is an improvement, never a reason to skip a round
        log.exception("estimate_failed")
        return with_rows(managed, _rows(book.estimate)), None
    if got.error is not None:
        log.warning("estimate_failed", error=got.error)
    kept = None
    if got.steps is not None and got.estimate is not None:
        kept = book.with_learned(got.steps, got.estimate)
    return with_rows(managed, got.rows), kept


def _rows(doc: Mapping[str, Any] | None) -> dict[str, dict[str, float]]:
    """The rows of the document kept (a failed call: the last estimate stays in force)."""
    if not doc:
        return {}
    jobs = doc.get("jobs", {})
    return {j: {g: c["mean"] for g, c in e["throughput"].items()} for j, e in jobs.items()}


def with_rows(managed: Managed[Any], rows: Mapping[str, Mapping[str, float]]) -> Managed[Any]:
    """The managed jobs with their estimated rows, cut to the types each may run on."""
    jobs = [
        replace(j, throughput={g: rows[j.id].get(g, v) for g, v in j.throughput.items()})
        if j.id in rows
        else j
        for j in managed.jobs
    ]
    return replace(managed, jobs=jobs)
