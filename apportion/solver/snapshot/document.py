"""Cluster snapshot, schema v1: the whole state a policy needs, carried by every request.

Every field beyond the core (GPU types, jobs, throughputs) is optional, so documents written for
one policy stay valid when later policies add fields. Unknown keys are rejected: a typo must not
silently change an answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from apportion.solver.errors import FieldError, InputError
from apportion.solver.layouts import RowsOrColumns
from apportion.solver.snapshot.checks import consistency_errors
from apportion.solver.snapshot.columnar import JobsAsColumns, jobs_from_columns
from apportion.solver.snapshot.columns import JobColumns, job_columns
from apportion.solver.snapshot.contention import ContentionTable
from apportion.solver.snapshot.jobs import GpuType, Job
from apportion.solver.snapshot.nodes import Node, fill_derived_fields
from apportion.solver.snapshot.service import ServiceDistribution
from apportion.solver.snapshot.sharing import Entity, JobPair
from apportion.solver.snapshot.types import Finite, Name, Positive, Strict


class Snapshot(Strict):
    """The cluster as one request sees it."""

    schema_version: Literal["1"] = Field(default="1", description="Schema version.")
    policy: Name | None = Field(default=None, description="Policy to apply, if not given apart.")
    gpu_types: list[GpuType] = Field(
        description="GPU types with counts (derived from `nodes` when those are given); at "
        "least one type must have GPUs.",
        # What the consistency checks enforce (an empty cluster is refused), said in the schema
        # so that a generated client or a fuzzer does not build requests the server refuses.
        json_schema_extra={"minItems": 1, "contains": {"properties": {"count": {"minimum": 1}}}},
    )
    jobs: Annotated[list[Job], RowsOrColumns(JobsAsColumns)] = Field(
        default_factory=list,
        description="Jobs to allocate: a list of job objects, or (for large snapshots of plain "
        "jobs) an object of columns, one array per field with an entry per job.",
    )
    nodes: list[Node] | None = Field(default=None, description="Nodes, for placement policies.")
    lease_seconds: Positive | None = Field(
        default=None, description="Lease length in seconds (deadline policies)."
    )
    now: Finite | None = Field(
        default=None, description="Current time in seconds, the clock of job deadlines."
    )
    lease_start: Finite | None = Field(
        default=None,
        description="When the current lease started (deadline policies): leases follow one "
        "fixed grid, slot 0 being [lease_start, lease_start + lease_seconds), of which what "
        "is left after `now` can still be used. Default: `now` (a call at a lease boundary).",
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
    service_distribution: ServiceDistribution | None = Field(
        default=None,
        description="Past jobs' GPU-times, for the 2D-Gittins index (Tiresias policies).",
    )

    @field_validator("jobs", mode="wrap")
    @classmethod
    def _jobs_as_columns(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        """Jobs given as columns (`solver.snapshot.columnar`), checked a column at a time."""
        if not isinstance(value, Mapping):
            return handler(value)
        gpu_types = info.data.get("gpu_types")
        names = None if gpu_types is None else [g.name for g in gpu_types]
        jobs = jobs_from_columns(value, names)
        if isinstance(jobs, list):
            raise _validation_error("jobs", jobs)
        return jobs

    @field_serializer("jobs", mode="wrap")
    def _jobs_as_given(self, jobs: Any, handler: SerializerFunctionWrapHandler) -> Any:
        # Jobs checked as columns (`solver.snapshot.columns`) are written in the layout they
        # came in: the list they stand for, or their columns.
        if isinstance(jobs, JobColumns) and jobs.layout == "columns":
            return jobs.columns()
        return handler(jobs if isinstance(jobs, list) else list(jobs))

    @model_validator(mode="before")
    @classmethod
    def _derive(cls, data: Any) -> Any:
        return fill_derived_fields(data)

    @model_validator(mode="after")
    def _consistent(self) -> Snapshot:
        # Jobs given as columns have had the rules that involve their fields checked (ids
        # unique, known GPU types); no other rule involves those fields but the job pairs'.
        columns = isinstance(self.jobs, JobColumns) and not self.job_pairs
        errors = consistency_errors(self.model_copy(update={"jobs": []}) if columns else self)
        if errors:
            # Raised as a ValidationError so every problem keeps its own location.
            raise _validation_error("Snapshot", errors)
        return self


def _validation_error(title: str, errors: list[FieldError]) -> ValidationError:
    return ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(
                type=PydanticCustomError(e.type, "{reason}", {"reason": e.msg}),
                loc=e.loc,
                input=None,
            )
            for e in errors
        ],
    )


def parse_snapshot(data: Any) -> Snapshot:
    """Validate a decoded JSON document into a snapshot, or raise `InputError`."""
    fast = _by_columns(data)
    if fast is not None:
        return fast
    try:
        return Snapshot.model_validate(data)
    except ValidationError as exc:
        raise InputError.from_validation(exc, ("snapshot",), Snapshot) from None


def _by_columns(data: Any) -> Snapshot | None:
    """The snapshot with its jobs validated as columns (a list of plain jobs:
    `solver.snapshot.columns`; jobs given as columns: `solver.snapshot.columnar`), or None for
    the full validation to decide (and report every problem). The rest of the document is
    validated as always, without its jobs: then no cross-field rule can involve a job except
    the ones checked here (ids unique, throughputs naming known types), the columns' fields
    carrying no other."""
    if not isinstance(data, dict) or data.get("job_pairs"):
        return None
    given = data.get("jobs")
    if not isinstance(given, list | Mapping):
        return None
    try:
        rest = Snapshot.model_validate({**data, "jobs": []})
    except ValidationError:
        return None
    names = [g.name for g in rest.gpu_types]
    if isinstance(given, list):
        jobs = job_columns(given, names)
    else:
        read = jobs_from_columns(given, names)
        jobs = read if isinstance(read, JobColumns) else None
    if jobs is None:
        return None
    return rest.model_copy(update={"jobs": jobs})
