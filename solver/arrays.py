"""The snapshot as arrays: what every formulation reads instead of pydantic objects."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from solver.snapshot import Snapshot

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class ClusterArrays:
    """Jobs × GPU types in numpy form; row j is `job_ids[j]`, column k is `gpu_names[k]`."""

    job_ids: list[str]
    gpu_names: list[str]
    throughput: FloatArray  # T_jk, (m, K)
    scale_factor: FloatArray  # s_j, (m,)
    weight: FloatArray  # w_j, (m,)
    gpu_count: FloatArray  # N_k, (K,)
    price_per_hour: FloatArray  # p_k, NaN where not given, (K,)
    steps_remaining: FloatArray  # R_j, NaN where not given
    time_since_start: FloatArray  # t_j, NaN where not given
    arrival_time: FloatArray  # NaN where not given
    isolated_time_done: FloatArray  # t^iso_done_j, NaN where not given
    deadline: FloatArray  # absolute seconds, NaN where not given
    now: float | None  # the deadlines' clock

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> ClusterArrays:
        gpu_names = [g.name for g in snapshot.gpu_types]
        column = {name: k for k, name in enumerate(gpu_names)}
        jobs = snapshot.jobs
        m, n_types = len(jobs), len(gpu_names)
        # One flat pass over the sparse throughput dicts, then a single scatter.
        counts = [len(job.throughput) for job in jobs]
        rows = np.repeat(np.arange(m), counts)
        cols = [column[name] for job in jobs for name in job.throughput]
        vals = [value for job in jobs for value in job.throughput.values()]
        throughput = np.zeros((m, n_types))
        throughput[rows, cols] = vals

        def optional(values: list[float | None]) -> FloatArray:
            return np.array([np.nan if v is None else v for v in values], dtype=float)

        return cls(
            job_ids=[job.id for job in jobs],
            gpu_names=gpu_names,
            throughput=throughput,
            scale_factor=np.array([job.scale_factor for job in jobs], dtype=float),
            weight=np.array([job.weight for job in jobs], dtype=float),
            gpu_count=np.array([g.count for g in snapshot.gpu_types], dtype=float),
            price_per_hour=optional([g.price_per_hour for g in snapshot.gpu_types]),
            steps_remaining=optional([job.steps_remaining for job in jobs]),
            time_since_start=optional([job.time_since_start for job in jobs]),
            arrival_time=optional([job.arrival_time for job in jobs]),
            isolated_time_done=optional([job.isolated_time_done for job in jobs]),
            deadline=optional([job.deadline for job in jobs]),
            now=snapshot.now,
        )

    @property
    def num_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def num_types(self) -> int:
        return len(self.gpu_names)

    @cached_property
    def eligible(self) -> BoolArray:
        """E_jk: job j can run on type k (positive throughput and enough GPUs for its gang)."""
        return (self.throughput > 0) & (self.scale_factor[:, None] <= self.gpu_count[None, :])

    @cached_property
    def equal_share_throughput(self) -> FloatArray:
        """Gavel's normaliser prop_j = Σ_k T_jk N_k / C."""
        share: FloatArray = self.throughput @ self.gpu_count / self.gpu_count.sum()
        return share

    def unplaceable_reasons(self) -> dict[int, str]:
        """Jobs that no allocation can serve, with the reason a user would want to read."""
        runs_nowhere = ~(self.throughput > 0).any(axis=1)
        too_wide = ~runs_nowhere & ~self.eligible.any(axis=1)
        reasons = {
            int(j): "no positive throughput on any GPU type" for j in np.flatnonzero(runs_nowhere)
        }
        for j in np.flatnonzero(too_wide):
            reasons[int(j)] = (
                f"scale factor {int(self.scale_factor[j])} exceeds the GPU count of every type "
                "it can run on"
            )
        return reasons
