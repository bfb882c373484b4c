"""The options of the contention-placement policy: the objective and its weight, the priority
and restart cost of the schedule objective, the penalty, which jobs contend, the shapes a job
may take and how many waiting jobs are considered."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict, field_validator

from apportion.solver.options import PolicyOptions

_Demand = Annotated[int, Strict(False)]
_Shape = Annotated[tuple[int, int], Strict(False)]


class ContentionPlacementOptions(PolicyOptions):
    w1: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Weight W1 of the mean contention sensitivity; utilization gets W2 = 1 − W1.",
    )
    penalty: Literal["worst", "additive"] = Field(
        "worst",
        description="worst: a job's CS is set by its worst co-runner (DeepShare); additive: "
        "1 + Σ (CS − 1) over its co-runners.",
    )
    objective: Literal["schedule", "linear", "reference"] = Field(
        "schedule",
        description="schedule: decide who runs, where, and who keeps running: W2·priority-"
        "weighted GPUs − W1·GPUs' throughput lost to contention − W2·restart cost (with zero "
        "contention it runs exactly the jobs SRTF or LAS would); linear: start waiting jobs, "
        "W2·U − W1·mean CS over every job of the snapshot, a waiting job counting 1; reference: "
        "start waiting jobs, DeepShare's reward W2·U − W1·mean(1 − 1/CS) over running and "
        "started jobs. The schedule and reference objectives need penalty worst.",
    )
    contention_value: Literal["flat", "progress"] = Field(
        "flat",
        description="schedule: what the throughput a job loses to contention costs: flat, "
        "W1·g_j·ℓ_j (DeepShare's penalty alone); progress, that plus W2·π_j·g_j·σ_j·ℓ_j, the "
        "priority-weighted progress it takes, so a job's value is its progress, "
        "π_j·g_j·σ_j·(1 − ℓ_j), and contention is weighed at the priority of the job it slows.",
    )
    priority: Literal["srtf", "las"] = Field(
        "srtf",
        description="schedule: whose GPUs come first: shortest remaining time (steps_remaining "
        "over throughput, or remaining_time) or least attained service (attained_service).",
    )
    priority_levels: int = Field(
        4,
        ge=1,
        le=8,
        description="schedule: priority keys are cut into at most this many levels at their "
        "largest gaps; a level is served before every level below it.",
    )
    priority_tolerance: float = Field(
        60.0,
        ge=0.0,
        description="schedule: seconds within which priority keys tie (never cut into levels).",
    )
    moves: Literal["none", "preempt", "migrate"] = Field(
        "none",
        description="schedule: what may happen to a running job: none (it stays where it "
        "runs), preempt (it stays or stops, to restart later), migrate (it may also restart "
        "elsewhere now); a stop or a move costs restart_seconds.",
    )
    restart_seconds: float = Field(
        60.0,
        ge=0.0,
        description="schedule: seconds of its GPUs a job loses when it is moved or preempted "
        "(checkpoint and restore), charged against horizon_seconds of running.",
    )
    horizon_seconds: float = Field(
        300.0,
        gt=0.0,
        description="schedule: the seconds this decision is expected to hold (DeepShare's "
        "round): a restart costs restart_seconds / horizon_seconds of the job's value.",
    )
    candidates: int | None = Field(
        None,
        ge=1,
        description="Consider only the first this many waiting jobs (schedule: by priority, "
        "identical jobs beyond what could run at once skipped; otherwise in snapshot order), as "
        "DeepShare offers its policy the head of its queue; none: every waiting job.",
    )
    contention_scope: Literal["multi_node", "all"] = Field(
        "multi_node",
        description="multi_node: jobs on a single node neither suffer nor cause network "
        "contention (DeepShare's simulator); all: every co-located pair counts.",
    )
    # JSON object keys are strings and pairs come as lists: this field converts both.
    shapes: dict[_Demand, list[_Shape]] | None = Field(
        None,
        description="Allowed shapes per demand, {demand: [[nodes, GPUs per node], ...]}; "
        "demands not listed get powers of two up to the node size.",
    )
    allow_single_node: bool = Field(
        True, description="Allow multi-GPU jobs on one node (DeepShare's baselines do not)."
    )

    @field_validator("shapes")
    @classmethod
    def _shapes_match(
        cls, shapes: dict[int, list[tuple[int, int]]] | None
    ) -> dict[int, list[tuple[int, int]]] | None:
        for demand, listed in (shapes or {}).items():
            for k, p in listed:
                if k < 1 or p < 1 or k * p != demand:
                    raise ValueError(
                        f"shape [{k}, {p}] for demand {demand}: nodes × GPUs per node must "
                        f"equal the demand"
                    )
        return shapes
