"""The result document: what every policy returns, in the snapshot's own ids."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from solver.status import Status

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

    def job(self, job_id: str) -> JobResult:
        for job in self.jobs:
            if job.id == job_id:
                return job
        raise KeyError(job_id)
