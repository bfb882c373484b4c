"""Deadlines and job classes (FORMULATIONS §6): what a deadline-aware scheduler tells apportion.

An SLO job carries deadline options, each with the value earned when the job ends by it: a strict
job has one option, a soft job several at growing deadlines (typically decreasing values). A
best-effort job has none. Deadlines are absolute times in seconds on the clock of the snapshot's
`now`. `guaranteed` marks jobs an earlier answer promised to finish by one of their options.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from apportion.solver.snapshot.types import Finite, Positive


class JobClass(StrEnum):
    STRICT = "strict"
    SOFT = "soft"
    BEST_EFFORT = "best_effort"


class DeadlineOption(BaseModel):
    """Finish by `time` (seconds, same clock as the snapshot's `now`) and earn `value`."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    time: Finite = Field(description="Absolute deadline in seconds.")
    value: Positive = Field(
        default=1.0, description="Value earned when the job ends by this deadline (> 0)."
    )
