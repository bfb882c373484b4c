"""GPU types and jobs: the core of every snapshot (schema v1)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic import Strict as PydanticStrict

from apportion.solver.snapshot.deadlines import DeadlineOption, JobClass
from apportion.solver.snapshot.elastic import Elastic
from apportion.solver.snapshot.service import MAX_TENSORS
from apportion.solver.snapshot.types import (
    MAX_COUNT,
    Count,
    Finite,
    Flag,
    Name,
    NonNegative,
    Positive,
    PositiveCount,
    Strict,
)

#: A relative error bound δ: the true value lies within [v·(1−δ), v·(1+δ)].
Uncertainty = Annotated[float, PydanticStrict(True), Field(ge=0, le=1, allow_inf_nan=False)]
#: A relative error bound on a duration: the true one lies within [v·(1−δ), v·(1+δ)], δ ≤ 10.
DurationUncertainty = Annotated[
    float, PydanticStrict(True), Field(ge=0, le=10, allow_inf_nan=False)
]
# Node counts come as JSON object keys, which are strings.
SpreadNodes = Annotated[int, PydanticStrict(False), Field(ge=1, le=MAX_COUNT)]


class GpuType(Strict):
    """A GPU type and how many of it the cluster has."""

    name: Name = Field(description="Identifier used as key in job throughputs, e.g. `v100`.")
    count: Count = Field(description="GPUs of this type available to the policy.")
    price_per_hour: NonNegative | None = Field(
        default=None, description="Price per GPU-hour (cost policies)."
    )


class Job(Strict):
    """A job as the policy sees it. Throughputs are for the whole job at its scale factor."""

    id: Name = Field(description="Unique job identifier; results are keyed by it.")
    scale_factor: PositiveCount = Field(
        default=1, description="GPUs the job occupies at once (gang)."
    )
    weight: Positive = Field(default=1.0, description="Priority weight w_j.")
    throughput: dict[Name, NonNegative] = Field(
        default_factory=dict,
        description="Steps/s of the whole job per GPU type; missing or 0 = cannot run there.",
    )
    throughput_uncertainty: dict[Name, Uncertainty] | None = Field(
        default=None,
        description="Relative error bound δ_jk per GPU type (0 to 1): the true throughput lies "
        "in [T_jk·(1−δ_jk), T_jk·(1+δ_jk)] (robust policies); a type left out takes the "
        "policy's `uncertainty` option.",
    )
    steps_remaining: NonNegative | None = Field(default=None, description="Steps left (R_j).")
    time_since_start: NonNegative | None = Field(
        default=None, description="Seconds since the job started (t_j, finish-time fairness)."
    )
    arrival_time: Finite | None = Field(default=None, description="Arrival time in seconds.")
    isolated_time_done: NonNegative | None = Field(
        default=None,
        description="Seconds the work done so far would have taken on the job's isolated share "
        "(t^iso_done, finish-time fairness); missing = 0, a job that has done no work.",
    )
    deadline: Finite | None = Field(
        default=None,
        description="Absolute time (seconds, same clock as the snapshot's `now`) by which the "
        "job's remaining steps should be done (SLO policies).",
    )
    entity: Name | None = Field(default=None, description="Owning entity (hierarchical policies).")
    workload_class: Name | None = Field(default=None, description="Workload class, e.g. `LM`.")
    remaining_time: NonNegative | None = Field(
        default=None,
        description="Estimated seconds of work left at its scale factor (deadline policies); "
        "else steps_remaining / throughput.",
    )
    remaining_time_uncertainty: DurationUncertainty | None = Field(
        default=None,
        description="Relative error bound δ of the remaining time (given or derived from "
        "steps): the true one lies in [E·(1−δ), E·(1+δ)] (deadline policies, which then plan "
        "for E·(1+δ)); missing: the policy's `uncertainty` option.",
    )
    job_class: JobClass | None = Field(
        default=None, description="strict, soft or best_effort; derived from deadlines if absent."
    )
    deadlines: list[DeadlineOption] | None = Field(
        default=None, description="Deadline options with values, increasing in time (SLO jobs)."
    )
    guaranteed: Flag = Field(
        default=False, description="An earlier answer guaranteed one of the job's deadlines."
    )
    guaranteed_deadline: Finite | None = Field(
        default=None,
        description="The deadline an earlier answer guaranteed (its `deadline` metric): the job "
        "keeps that option or an earlier one, never a later one (deadline policies; with "
        "`guaranteed`). Without it any option keeps the guarantee.",
    )
    placement: dict[Name, PositiveCount] | None = Field(
        default=None,
        description="Node id → GPUs for a job already running (placement policies; the "
        "deadline policy keeps it there when it goes on running, and cannot move it before "
        "`held_until`); the scale factor defaults to their sum.",
    )
    held_until: Finite | None = Field(
        default=None,
        description="The job holds the GPUs of its `placement` until this time (seconds, the "
        "clock of `now`) and cannot be moved before: a lease it runs (deadline policies). "
        "Usually the end of the current lease; a time not after `now` holds nothing.",
    )
    overhead_seconds: NonNegative | None = Field(
        default=None,
        description="Checkpoint/restore seconds the job loses in each lease it (re)starts "
        "(deadline policies); default: the policy's `overhead_seconds` option.",
    )
    consolidate: Flag = Field(
        default=False, description="Place on the fewest nodes its allowed shapes permit."
    )
    # Tiresias's part (`snapshot.service`): attained service, waiting, first start, queue
    # order, skew.
    attained_service: NonNegative | None = Field(
        default=None,
        description="Service the job has attained, by which least-attained-service priorities "
        "rank it: for the Tiresias policies GPU-seconds (GPUs × seconds) since it last entered "
        "the top queue, at arrival or at a promotion (their queue thresholds are GPU-seconds); "
        "for the placement policy's `las` priority, which only compares jobs, seconds run. "
        "Missing = 0.",
    )
    pending_seconds: NonNegative | None = Field(
        default=None,
        description="Seconds waited since the job first ran after it last entered the top "
        "queue (Tiresias's δ_J, compared with PROMOTEKNOB × its run time); missing = 0.",
    )
    started_at: Finite | None = Field(
        default=None,
        description="When the job first ran (the clock of `now`); 2D-LAS serves a queue in "
        "this order. Missing: it never ran.",
    )
    queue_order: NonNegative | None = Field(
        default=None,
        description="The job's place in its queue as the scheduler keeps it, lowest first "
        "(Tiresias's simulator: a job joins the back of its queue on arrival, demotion or "
        "promotion, and after each decision the jobs that run move ahead of those that wait); "
        "the Tiresias policies serve jobs of equal priority in this order. Missing: behind "
        "every job that has one.",
    )
    tensor_sizes: list[Positive] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_TENSORS,
        description="Sizes of the model's tensors (one unit, e.g. MB): the skew (the largest "
        "tensor's share) decides consolidation against `pack_limit`, and a parameter server "
        "per worker gets them round-robin (TensorFlow's rule) for the network-load placement.",
    )
    spread_throughput: dict[SpreadNodes, NonNegative] | None = Field(
        default=None,
        description="Steps/s of the whole job by the number of nodes it spans, where the spread "
        "changes its speed (DeepShare's isolated throughput per configuration); placement "
        "policies read it, and a spread it leaves out runs at the job's throughput.",
    )
    elastic: Elastic | None = Field(
        default=None,
        description="Candidate configurations (GPU type, GPUs, nodes, batch size) with their "
        "goodput, or the goodput model they follow (elastic policies).",
    )


def job_class(job: Job) -> JobClass:
    """The declared class, else strict for one deadline, soft for several, best-effort for none."""
    if job.job_class is not None:
        return job.job_class
    if not job.deadlines:
        return JobClass.BEST_EFFORT
    return JobClass.STRICT if len(job.deadlines) == 1 else JobClass.SOFT
