"""Deadlines and job classes (FORMULATIONS §6): what a deadline-aware scheduler tells apportion.

An SLO job carries deadline options, each with the value earned when the job ends by it: a strict
job has one option, a soft job several at growing deadlines (typically decreasing values). A
best-effort job has none. Deadlines are absolute times in seconds on the clock of the snapshot's
`now`. `guaranteed` marks jobs an earlier answer promised to finish by one of their options.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

from solver.errors import FieldError

if TYPE_CHECKING:
    from solver.snapshot import Job, Snapshot


class JobClass(StrEnum):
    STRICT = "strict"
    SOFT = "soft"
    BEST_EFFORT = "best_effort"


class DeadlineOption(BaseModel):
    """Finish by `time` (seconds, same clock as the snapshot's `now`) and earn `value`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    time: Annotated[float, Field(allow_inf_nan=False)] = Field(
        description="Absolute deadline in seconds."
    )
    value: Annotated[float, Field(gt=0, allow_inf_nan=False)] = Field(
        default=1.0, description="Value earned when the job ends by this deadline (> 0)."
    )


def job_class(job: Job) -> JobClass:
    """The declared class, else strict for one deadline, soft for several, best-effort for none."""
    if job.job_class is not None:
        return job.job_class
    if not job.deadlines:
        return JobClass.BEST_EFFORT
    return JobClass.STRICT if len(job.deadlines) == 1 else JobClass.SOFT


def deadline_errors(snapshot: Snapshot) -> list[FieldError]:
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
