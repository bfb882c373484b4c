"""The options of the Tiresias policies: queues, starvation, preemption, admission, placement."""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from pydantic import Field, field_validator

from apportion.solver.options import PolicyOptions

#: Tiresias's testbed (NSDI'19 §5.2): two queues split at 3,200 GPU-seconds.
PAPER_THRESHOLDS = (3200.0,)
#: Tiresias's simulator (`jobs.py`): three queues split at 3,250, 7,200 and 18,000 GPU-seconds
#: (the third limit is unused with three queues).
SIMULATOR_THRESHOLDS = (3250.0, 7200.0)


class TiresiasOptions(PolicyOptions):
    thresholds: list[float] = Field(
        default_factory=lambda: list(PAPER_THRESHOLDS),
        max_length=63,
        description="Queue limits in GPU-seconds of attained service, increasing: K − 1 "
        "limits make K queues (default: the paper's testbed, 2 queues at 3,200).",
    )
    promote_knob: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="PROMOTEKNOB: a waiting job below the top queue goes back to it once it "
        "has waited this many times its run time since it entered the top queue; "
        "null = never (the paper's testbed).",
    )
    preemption_cost: float = Field(
        0.0,
        ge=0,
        allow_inf_nan=False,
        description="Seconds of checkpoint and restore a preempted job loses (Tiresias "
        "measured about 62); a job's own `overhead_seconds` overrides it. With a cost, a "
        "running job is never stopped for a job of its own queue or below.",
    )
    max_preemptions: int | None = Field(
        None, ge=0, description="At most this many running jobs stopped per decision."
    )
    admission: Literal["exact", "greedy"] = Field(
        "exact",
        description="exact: the most jobs of each queue in turn (a MILP), then the fewest "
        "preemption-seconds, then priority; greedy: Tiresias's rule, by priority, skipping "
        "gangs that do not fit and backfilling behind them.",
    )
    pack_limit: float = Field(
        0.5,
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="PACKLIMIT: a job whose largest tensor is more than this share of its "
        "model (from `tensor_sizes`) is consolidated, as is a job with `consolidate`.",
    )
    placement: Literal["consolidate", "network_load"] = Field(
        "consolidate",
        description="consolidate: sensitive jobs on the fewest nodes, the rest into the "
        "smallest holes (Tiresias); network_load: the rest by the appendix ILP, minimizing "
        "the most loaded node's network traffic.",
    )

    @field_validator("thresholds")
    @classmethod
    def _increasing(cls, limits: list[float]) -> list[float]:
        if any(not 0 < a < float("inf") for a in limits):
            raise ValueError("queue limits must be positive, finite GPU-seconds")
        if any(b <= a for a, b in pairwise(limits)):
            raise ValueError("queue limits must increase")
        return limits


class GittinsOptions(TiresiasOptions):
    quantum: Literal["queue", "sup"] = Field(
        "queue",
        description="queue: the service quantum Δ of a job in queue i runs to the queue's "
        "limit (the paper's discretization; ∞ in the last queue); sup: the classic index, "
        "the supremum over every Δ.",
    )
