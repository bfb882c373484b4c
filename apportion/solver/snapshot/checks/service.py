"""A service distribution holds exactly one non-empty form; a running job's first start is not
after `now`."""

from __future__ import annotations

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.view import SnapshotView


def service_errors(snapshot: SnapshotView) -> list[FieldError]:
    errors: list[FieldError] = []
    dist = snapshot.service_distribution
    if dist is not None:
        given = [name for name in ("samples", "histogram") if getattr(dist, name) is not None]
        if len(given) != 1:
            errors.append(
                FieldError(
                    ("service_distribution",),
                    "give exactly one of samples and histogram"
                    + (f" (got {' and '.join(given)})" if given else ""),
                    "value_error",
                )
            )
        elif not getattr(dist, given[0]):
            errors.append(
                FieldError(
                    ("service_distribution", given[0]),
                    "needs at least one past job",
                    "value_error",
                )
            )
    now = snapshot.now
    if now is not None:
        for j, job in enumerate(snapshot.jobs):
            if job.started_at is not None and job.started_at > now:
                errors.append(
                    FieldError(
                        ("jobs", j, "started_at"),
                        f"{job.started_at:g} is after now ({now:g})",
                        "value_error",
                    )
                )
    return errors
