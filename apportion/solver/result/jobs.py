"""One job's answer (`JobResult`), and the result's jobs as columns (`JobResultColumns`).

A result writes its jobs in one of two layouts: rows, a list of job objects (the default), or
columns, one array per field with an entry per job (for large snapshots: `solver.result.table`
writes them from numpy, without an object per job).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

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


class JobResultColumns(BaseModel):
    """The jobs as columns (`options.jobs_layout = "columns"`): each field an array with one
    entry per job, entry j of every array being job j's, in the snapshot's order."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: list[str]
    allocation: dict[str, list[float]] = Field(
        description="GPU type → each job's fraction of time on it (0 where none), every type."
    )
    effective_throughput: list[float]
    normalized_share: list[float | None] | None = Field(
        description="null as a whole where the policy defines no share."
    )
    reason: list[str | None] = Field(description="Why the job received nothing; else null.")
    metrics: dict[str, list[Metric]] = Field(
        description="Metric name → its value per job (null where not defined for the job)."
    )
    placement: list[dict[str, int] | None] = Field(
        description="Node id → GPUs, for policies that place jobs on nodes; else null."
    )
