"""Deadline options increase, classes agree with them, guarantees only on SLO jobs; the lease
grid's phase lies in the lease of `now`; a held lease names the GPUs it holds."""

from __future__ import annotations

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.deadlines import JobClass
from apportion.solver.snapshot.view import SnapshotView


def deadline_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Increasing deadline lists, classes that agree with them, guarantees only on SLO jobs."""
    errors = _lease_start_errors(snapshot)
    for i, job in enumerate(snapshot.jobs):
        if job.held_until is not None and job.placement is None:
            errors.append(
                FieldError(
                    ("jobs", i, "held_until"),
                    "a held lease needs the job's `placement` (the GPUs it holds)",
                    "missing_placement",
                )
            )
        if not job.deadlines and job.job_class is None and not job.guaranteed:
            continue  # nothing deadline-related to check (most jobs of most policies)
        options = job.deadlines or []
        times = [o.time for o in options]
        for v in range(1, len(times)):
            if times[v] <= times[v - 1]:
                errors.append(
                    FieldError(
                        ("jobs", i, "deadlines", v, "time"),
                        f"deadline options must be increasing: {times[v]:g} follows "
                        f"{times[v - 1]:g}",
                        "not_increasing",
                    )
                )
        kind = job.job_class
        if kind is JobClass.STRICT and len(options) != 1:
            errors.append(
                FieldError(
                    ("jobs", i, "deadlines"),
                    f"a strict job has exactly one deadline option, got {len(options)}",
                    "class_mismatch",
                )
            )
        elif kind is JobClass.SOFT and not options:
            errors.append(
                FieldError(
                    ("jobs", i, "deadlines"),
                    "a soft job needs at least one deadline option",
                    "class_mismatch",
                )
            )
        elif kind is JobClass.BEST_EFFORT and options:
            errors.append(
                FieldError(
                    ("jobs", i, "deadlines"),
                    "a best-effort job has no deadline options",
                    "class_mismatch",
                )
            )
        if job.guaranteed and not options:
            errors.append(
                FieldError(
                    ("jobs", i, "guaranteed"),
                    "only jobs with deadline options can be guaranteed",
                    "class_mismatch",
                )
            )
    return errors


def _lease_start_errors(snapshot: SnapshotView) -> list[FieldError]:
    """The current lease started at `lease_start`, so `now` lies within it."""
    start = snapshot.lease_start
    if start is None:
        return []
    now = snapshot.now if snapshot.now is not None else 0.0
    lease = snapshot.lease_seconds
    if start > now:
        reason = f"the current lease cannot start after now ({start:g} > {now:g})"
    elif lease is not None and now - start >= lease:
        reason = (
            f"now ({now:g}) is {now - start:g} s past the lease start, a lease is {lease:g} s: "
            "give the start of the lease now lies in"
        )
    else:
        return []
    return [FieldError(("lease_start",), reason, "out_of_lease")]
