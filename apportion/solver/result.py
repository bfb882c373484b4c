"""The result document: what every policy returns, in the snapshot's own ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from apportion.solver.status import Status

Metric = float | int | str | bool | None


@dataclass(slots=True)
class JobResult:
    """One job's answer. Jobs that got nothing say why in `reason`.

    A plain dataclass rather than a pydantic model: results carry up to 100,000 jobs and are built
    by us, not parsed, so per-object validation would only cost time.

    - allocation: fraction of wall-clock time per GPU type (only X_jk > 0 listed)
    - effective_throughput: Σ_k T_jk X_jk, steps/s
    - normalized_share: s_j·eff_j / (w_j·prop_j), the quantity max-min fairness equalizes
    - reason: why the job received nothing, if it did not
    - metrics: policy-specific values (finish time, ρ, level, ...)
    - placement: node id → GPUs on that node, for policies that place jobs on nodes
    """

    id: str
    allocation: dict[str, float]
    effective_throughput: float = 0.0
    normalized_share: float | None = None
    reason: str | None = None
    metrics: dict[str, Metric] = field(default_factory=dict)
    placement: dict[str, int] | None = None


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
    status: Status
    objective: float | None = None
    objective_name: str = ""
    jobs: list[JobResult] = Field(default_factory=list)
    gpu_types: list[GpuTypeUsage] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict, description="Policy-specific totals.")
    warnings: list[str] = Field(default_factory=list)
    solver: SolverReport
    explanation: Explanation | None = Field(
        None,
        exclude_if=lambda value: value is None,
        description="Present with options.explain = true (docs/EXPLANATIONS.md).",
    )

    def job(self, job_id: str) -> JobResult:
        for job in self.jobs:
            if job.id == job_id:
                return job
        raise KeyError(job_id)


# What-if (`solver.compare`, POST /v1/compare): two answers under one policy, side by side.
ADVISORY = (
    "advisory: each side is solved on its own; where the policy has several equally good "
    "answers, jobs may move between them for no reason in the data, and shares are measured "
    "against each side's own cluster"
)


class JobChange(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str
    change: str = Field(description="both, added or removed.")
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
    gpu_types: list[GpuChange]
    jobs: list[JobChange] = Field(description="Jobs that changed, largest change first.")
    unchanged: int = Field(description="Jobs on both sides whose answer did not change.")
