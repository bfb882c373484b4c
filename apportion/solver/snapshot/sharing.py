"""Snapshot parts for fairness across entities and for space sharing (schema v1, optional).

- `entities`: who owns jobs, with weights and the policy inside each entity (FORMULATIONS §1b).
  A job links to its entity through `Job.entity`.
- `job_pairs`: pairs of jobs that may share the same GPUs, with each member's throughput while
  co-located, per GPU type (FORMULATIONS §1c). Throughputs are for the whole job at its scale
  factor, like `Job.throughput`; a pair occupies the members' common scale factor, not twice it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from apportion.solver.snapshot.types import Name, NonNegative, Positive, Strict


class Entity(Strict):
    """An owner of jobs (a team, a tenant) with a share of the cluster."""

    id: Name = Field(description="Entity identifier; jobs name it in `entity`.")
    weight: Positive = Field(default=1.0, description="Entity weight W_e.")
    policy: Literal["fairness", "fifo"] = Field(
        default="fairness",
        description="Inside the entity: `fairness` splits W_e over its active jobs in "
        "proportion to their weights; `fifo` gives W_e to its oldest active job.",
    )


class JobPair(Strict):
    """Two jobs that may run together on the same GPUs (space sharing)."""

    a: Name = Field(description="Id of the first job.")
    b: Name = Field(description="Id of the second job.")
    throughput: dict[Name, tuple[NonNegative, NonNegative]] = Field(
        description="Per GPU type, [throughput of a, throughput of b] while co-located "
        "(steps/s of each whole job); missing = the pair cannot share that type."
    )
