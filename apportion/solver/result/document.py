"""The result document: what every policy returns, in the snapshot's own ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
)
from pydantic_core import PydanticCustomError

from apportion.solver.layouts import RowsOrColumns
from apportion.solver.result.jobs import JobResult, JobResultColumns, Metric
from apportion.solver.status import Status, Termination

if TYPE_CHECKING:
    from apportion.solver.result.table import JobTable


class GpuTypeUsage(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    available: int
    used: float = Field(description="GPUs in use on average: Σ_j s_j X_jk.")
    utilization: float = Field(description="used / available (0 when none available).")


class SolverReport(BaseModel):
    """How the answer was computed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    backend: str
    solver: str
    detail: str = Field("", description="The backend's own status text.")
    solves: int = Field(0, description="Models solved (iterative policies solve several).")
    iterations: int = 0
    variables: int = 0
    constraints: int = 0
    nonzeros: int = 0
    integer_variables: int = 0
    mip_gap: float | None = None
    load_seconds: float = Field(
        0.0,
        description="Loading the policy's code on its first use in this process (imports); "
        "0 once loaded. Not part of validation.",
    )
    validate_seconds: float = Field(0.0, description="Validating the snapshot and options.")
    build_seconds: float = Field(
        0.0,
        description="Building the model: the model layer's compile plus the backend's own "
        "model construction (cvxpy expressions and canonicalization, PuLP objects).",
    )
    solve_seconds: float = Field(
        0.0,
        description="The solver call; for PuLP it includes handing the model over (writing "
        "CBC's input file, or PuLP's row-by-row HiGHS build).",
    )
    total_seconds: float = 0.0
    merged_groups: int | None = Field(
        None, description="Distinct job groups after merging identical jobs, if merged."
    )


@dataclass(slots=True)
class JobExplanation:
    """What holds one job where it is (see docs/EXPLANATIONS.md for the codes).

    - code: one reason from the fixed vocabulary (`bottleneck`, `capacity`, `lower_value`, ...)
    - why: the same in words, short enough for a table column
    - rows: the model rows behind it, by name (`share[job-3]`, `capacity[v100]`)
    - level, iteration: the level a level policy froze the job at, and the LP that froze it
    - reduced_costs: per GPU type it can use, the objective's change per unit of this job's time
      there at the final stage's prices (0 where it runs; negative where more would cost)
    - gain_if_free: the same without the capacity price: what a unit of that type's time would
      be worth to the objective if it came from idle GPUs
    - detail: numbers behind the code (e.g. the earliest deadline that could be guaranteed)
    """

    id: str
    code: str
    why: str
    rows: list[str] = field(default_factory=list)
    level: float | None = None
    iteration: int | None = None
    reduced_costs: dict[str, float] = field(default_factory=dict)
    gain_if_free: dict[str, float] = field(default_factory=dict)
    detail: dict[str, Metric] = field(default_factory=dict)


class StageInfo(BaseModel):
    """One solved model whose duals the explanation reads."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    objective: str = Field(description="What that model maximizes or minimizes, in words.")
    duals: bool = Field(description="Whether its solver reported duals.")


class GpuTypeExplanation(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    binding: bool = Field(description="Capacity is fully used (no idle GPU of this type).")
    idle: float = Field(description="GPUs of this type idle on average.")
    shadow_price: float | None = Field(
        None,
        description="How much the objective of `Explanation.price_stage` would gain per extra "
        "GPU of this type (the capacity row's dual); null where not known.",
    )
    prices: dict[str, float] = Field(
        default_factory=dict, description="The capacity row's dual in every stage, by stage."
    )


class Explanation(BaseModel):
    """Why the answer is what it is: duals and binding rows, or reason codes for MILPs."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    available: bool = Field(description="False when the evidence needed (duals) is missing.")
    note: str = Field("", description="What the figures refer to, or why they are missing.")
    price_stage: str | None = Field(
        None, description="The stage whose objective the shadow prices are for."
    )
    stages: list[StageInfo] = Field(default_factory=list)
    gpu_types: list[GpuTypeExplanation] = Field(default_factory=list)
    jobs: list[JobExplanation] = Field(default_factory=list)


class SolveResult(BaseModel):
    """The allocation a policy chose, with enough context to act on it and to trust it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    schema_version: str = "1"
    policy: str
    status: Status = Field(
        description="The answer's class: optimal; feasible (an allocation not proven optimal: "
        "see termination and solver.mip_gap); fallback (a documented heuristic answered); "
        "infeasible; unbounded; no_solution (stopped before any feasible point); error."
    )
    termination: Termination = Field(
        Termination.UNKNOWN,
        description="Why the solver stopped: optimal, inaccurate, infeasible, unbounded, "
        "infeasible_or_unbounded, time_limit, iteration_limit, solution_limit, objective_limit, "
        "user_limit, interrupted, numerical, solver_error, not_solved (no solver ran) or "
        "unknown (a code the backend's table does not know).",
    )
    objective: float | None = None
    objective_name: str = ""
    jobs: Annotated[Sequence[JobResult], RowsOrColumns(JobResultColumns)] = Field(
        default_factory=list,
        description="Each job's answer, in the snapshot's order: a list of job objects, or "
        "(`options.jobs_layout`, by default the layout the snapshot's jobs came in) columns.",
    )
    gpu_types: list[GpuTypeUsage] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict, description="Policy-specific totals.")
    warnings: list[str] = Field(default_factory=list)
    policy_note: str | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="Present when the policy was named in another system's vocabulary (Gavel's "
        "`max_min_fairness_packed`): which of ours solved it, with the options the name implies.",
    )
    solver: SolverReport
    explanation: Explanation | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="Present with options.explain = true (docs/EXPLANATIONS.md).",
    )

    def job(self, job_id: str) -> JobResult:
        if not isinstance(self.jobs, list):  # a `JobTable`: only that job is built
            return _table(self.jobs).by_id(job_id)
        job: JobResult
        for job in self.jobs:
            if job.id == job_id:
                return job
        raise KeyError(job_id)

    @field_validator("jobs", mode="wrap")
    @classmethod
    def _jobs_as_columns(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Jobs written as columns are read back into a `JobTable`."""
        if not isinstance(value, Mapping):
            return handler(value)
        from apportion.solver.result.table import JobTable

        try:
            return JobTable.from_columns(value)
        except (KeyError, TypeError, ValueError) as exc:
            reason = f"not a column of job answers: {exc}"
            raise PydanticCustomError("job_columns", "{reason}", {"reason": reason}) from None

    @field_serializer("jobs", mode="wrap")
    def _jobs_in_layout(self, jobs: Any, handler: SerializerFunctionWrapHandler) -> Any:
        # A `JobTable` is written in its layout: the list it stands for, or its columns.
        if isinstance(jobs, list):
            return handler(jobs)
        table = _table(jobs)
        return table.columns(plain=True) if table.layout == "columns" else handler(table.rows)


def _table(jobs: Sequence[JobResult]) -> JobTable:
    from apportion.solver.result.table import JobTable

    if not isinstance(jobs, JobTable):
        raise TypeError(f"jobs must be a list of JobResult or a JobTable, not {type(jobs)}")
    return jobs


# What-if (`solver.compare`, POST /v1/compare): two answers under one policy, side by side.
ADVISORY = (
    "advisory: each side is solved on its own; where the policy has several equally good "
    "answers, jobs may move between them for no reason in the data, and shares are measured "
    "against each side's own cluster"
)


class JobChange(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    change: str = Field(
        description="added, removed, gained or lost (more or less effective throughput), "
        "moved (other GPUs, the same throughput) or rescaled (the same allocation: only its "
        "share changed, measured against the other side's cluster)."
    )
    allocation_before: dict[str, float]
    allocation_after: dict[str, float]
    allocation_delta: dict[str, float]
    share_before: float | None = None
    share_after: float | None = None
    share_delta: float | None = None
    throughput_before: float = 0.0
    throughput_after: float = 0.0
    throughput_delta: float = 0.0
    size: float = Field(
        description="What the jobs are sorted by: |share change| where both sides have shares, "
        "else |throughput change| relative to the larger side."
    )


class GpuChange(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    available_before: int
    available_after: int
    used_before: float
    used_after: float


class Comparison(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    advisory: str = ADVISORY
    policy: str
    objective_name: str
    status_before: Status
    status_after: Status
    objective_before: float | None
    objective_after: float | None
    objective_delta: float | None
    gpu_types: list[GpuChange] = Field(description="Empty when a side has no allocation.")
    jobs: list[JobChange] = Field(
        description="Jobs that changed, largest change first; empty when a side has no "
        "allocation (see `warnings`)."
    )
    unchanged: int = Field(description="Jobs on both sides whose answer did not change.")
    warnings: list[str] = Field(
        default_factory=list,
        description="Each side not solved to optimality: without an allocation (no per-job "
        "differences then), or stopped by a limit (differences may come from the limit).",
    )
