"""Deadline options increase, classes agree with them, guarantees only on SLO jobs."""

from __future__ import annotations

from solver.errors import FieldError
from solver.snapshot.deadlines import JobClass
from solver.snapshot.view import SnapshotView


def deadline_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Increasing deadline lists, classes that agree with them, guarantees only on SLO jobs."""
    errors: list[FieldError] = []
    for i, job in enumerate(snapshot.jobs):
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
