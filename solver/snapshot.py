"""Cluster snapshot, schema v1: the whole state a policy needs, carried by every request.

Every field beyond the core (GPU types, jobs, throughputs) is optional, so documents written for
one policy stay valid when later policies add fields. Unknown keys are rejected: a typo must not
silently change an answer.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from solver.errors import FieldError, InputError
from solver.schema_types import Finite, Name, NonNegative, Positive, Strict
from solver.snapshot_contention import ContentionTable, contention_errors
from solver.snapshot_deadlines import DeadlineOption, JobClass, deadline_errors
from solver.snapshot_nodes import Node, fill_derived_fields, node_errors
from solver.snapshot_sharing import Entity, JobPair, entity_errors, pair_errors


class GpuType(Strict):
    """A GPU type and how many of it the cluster has."""

    name: Name = Field(description="Identifier used as key in job throughputs, e.g. `v100`.")
    count: int = Field(ge=0, description="GPUs of this type available to the policy.")
    price_per_hour: NonNegative | None = Field(
        default=None, description="Price per GPU-hour (cost policies)."
    )


class Job(Strict):
    """A job as the policy sees it. Throughputs are for the whole job at its scale factor."""

    id: Name = Field(description="Unique job identifier; results are keyed by it.")
    scale_factor: int = Field(default=1, ge=1, description="GPUs the job occupies at once (gang).")
    weight: Positive = Field(default=1.0, description="Priority weight w_j.")
    throughput: dict[Name, NonNegative] = Field(
        default_factory=dict,
        description="Steps/s of the whole job per GPU type; missing or 0 = cannot run there.",
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
    job_class: JobClass | None = Field(
        default=None, description="strict, soft or best_effort; derived from deadlines if absent."
    )
    deadlines: list[DeadlineOption] | None = Field(
        default=None, description="Deadline options with values, increasing in time (SLO jobs)."
    )
    guaranteed: bool = Field(
        default=False, description="An earlier answer guaranteed one of the job's deadlines."
    )
    placement: dict[Name, Annotated[int, Field(ge=1)]] | None = Field(
        default=None,
        description="Node id → GPUs for a job already running (placement policies); "
        "the scale factor defaults to their sum.",
    )
    consolidate: bool = Field(
        default=False, description="Place on the fewest nodes its allowed shapes permit."
    )


class Snapshot(Strict):
    """The cluster as one request sees it."""

    schema_version: Literal["1"] = Field(default="1", description="Schema version.")
    policy: Name | None = Field(default=None, description="Policy to apply, if not given apart.")
    gpu_types: list[GpuType] = Field(
        description="GPU types with counts (derived from `nodes` when those are given)."
    )
    jobs: list[Job] = Field(default_factory=list, description="Jobs to allocate.")
    nodes: list[Node] | None = Field(default=None, description="Nodes, for placement policies.")
    lease_seconds: Positive | None = Field(
        default=None, description="Lease length in seconds (deadline policies)."
    )
    now: Finite | None = Field(
        default=None, description="Current time in seconds, the clock of job deadlines."
    )
    entities: list[Entity] | None = Field(
        default=None, description="Job owners with weights (hierarchical policies)."
    )
    job_pairs: list[JobPair] | None = Field(
        default=None, description="Job pairs that may share GPUs, with co-located throughputs."
    )
    contention: ContentionTable | None = Field(
        default=None, description="Contention-sensitivity table (placement policies)."
    )

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        return fill_derived_fields(data)

    @model_validator(mode="after")
    def _consistent(self) -> Snapshot:
        errors = consistency_errors(self)
        if errors:
            # Raised as a ValidationError so every problem keeps its own location.
            raise ValidationError.from_exception_data(
                "Snapshot",
                [
                    InitErrorDetails(
                        type=PydanticCustomError(e.type, "{reason}", {"reason": e.msg}),
                        loc=e.loc,
                        input=None,
                    )
                    for e in errors
                ],
            )
        return self


def consistency_errors(snapshot: Snapshot) -> list[FieldError]:
    """Cross-field checks that single-field validation cannot express."""
    errors: list[FieldError] = []
    type_names = [g.name for g in snapshot.gpu_types]
    if not snapshot.gpu_types or sum(g.count for g in snapshot.gpu_types) == 0:
        errors.append(
            FieldError(("gpu_types",), "the cluster is empty: no GPUs of any type", "empty_cluster")
        )
    for name, n in Counter(type_names).items():
        if n > 1:
            errors.append(FieldError(("gpu_types",), f"duplicate GPU type {name!r}", "duplicate"))
    known = set(type_names)
    seen: set[str] = set()
    for i, job in enumerate(snapshot.jobs):
        if job.id in seen:
            errors.append(
                FieldError(("jobs", i, "id"), f"duplicate job id {job.id!r}", "duplicate")
            )
        seen.add(job.id)
        for gpu in job.throughput.keys() - known:
            errors.append(
                FieldError(
                    ("jobs", i, "throughput", gpu), f"unknown GPU type {gpu!r}", "unknown_gpu_type"
                )
            )
    return (
        errors
        + node_errors(snapshot)
        + contention_errors(snapshot.contention)
        + deadline_errors(snapshot)
        + entity_errors(snapshot)
        + pair_errors(snapshot)
    )


def parse_snapshot(data: Any) -> Snapshot:
    """Validate a decoded JSON document into a snapshot, or raise `InputError`."""
    try:
        return Snapshot.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ("snapshot",)) from None
