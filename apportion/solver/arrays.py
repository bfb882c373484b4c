"""The snapshot as arrays: what every formulation reads instead of pydantic objects."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.snapshot import Job, Snapshot
from apportion.solver.snapshot.columns import JobColumns

_NAMES = (
    "id",
    "scale_factor",
    "weight",
    "throughput",
    "steps_remaining",
    "time_since_start",
    "arrival_time",
    "isolated_time_done",
    "deadline",
)
_FIELDS = attrgetter(*_NAMES)


def _optional(values: Sequence[float | None]) -> FloatArray:
    """Floats with NaN for "not given"."""
    return np.array([np.nan if v is None else v for v in values], dtype=float)


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
        jobs = snapshot.jobs
        if isinstance(jobs, JobColumns) and jobs.gpu_names == gpu_names:
            # Validated as columns: the arrays are there, no `Job` object need be built (copied,
            # as a formulation may write into its problem's arrays).
            ids, throughput, scale = jobs.ids, jobs.throughput.copy(), jobs.scale_factor.copy()
            reals = {name: jobs.real(name) for name in ("weight", *_NAMES[4:])}
        else:
            ids, throughput, scale, reals = _from_jobs(jobs, gpu_names)
        return cls(
            job_ids=list(ids),
            gpu_names=gpu_names,
            throughput=throughput,
            scale_factor=scale,
            weight=reals["weight"],
            gpu_count=np.array([g.count for g in snapshot.gpu_types], dtype=float),
            price_per_hour=_optional([g.price_per_hour for g in snapshot.gpu_types]),
            steps_remaining=reals["steps_remaining"],
            time_since_start=reals["time_since_start"],
            arrival_time=reals["arrival_time"],
            isolated_time_done=reals["isolated_time_done"],
            deadline=reals["deadline"],
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
        placeable = self.eligible.any(axis=1)
        if np.count_nonzero(placeable) == placeable.size:
            return {}
        stuck = ~placeable
        runs_nowhere = ~(self.throughput > 0).any(axis=1)
        too_wide = ~runs_nowhere & stuck
        reasons = {
            int(j): "no positive throughput on any GPU type" for j in np.flatnonzero(runs_nowhere)
        }
        for j in np.flatnonzero(too_wide):
            reasons[int(j)] = (
                f"scale factor {int(self.scale_factor[j])} exceeds the GPU count of every type "
                "it can run on"
            )
        return reasons


def _from_jobs(
    jobs: Sequence[Job], gpu_names: list[str]
) -> tuple[list[str], FloatArray, FloatArray, dict[str, FloatArray]]:
    """Ids, throughput matrix, scale factors and the real-valued fields read from `Job`s."""
    column = {name: k for k, name in enumerate(gpu_names)}
    m = len(jobs)
    # One pass over the jobs reads every field (attrgetter and zip run in C, where a
    # comprehension per field walks the jobs once per field), then the arrays are built from
    # columns.
    fields = list(zip(*map(_FIELDS, jobs), strict=True)) if m else [()] * len(_NAMES)
    col = dict(zip(_NAMES, fields, strict=True))
    throughput = np.zeros((m, len(gpu_names)))
    per_job: tuple[dict[str, float], ...] = col["throughput"]
    rows = np.repeat(np.arange(m), list(map(len, per_job)))
    names = list(chain.from_iterable(per_job))
    throughput[rows, list(map(column.__getitem__, names))] = list(
        chain.from_iterable(map(dict.values, per_job))
    )
    reals = {name: _optional(col[name]) for name in _NAMES[4:]}
    reals["weight"] = np.array(col["weight"], dtype=float)
    return list(col["id"]), throughput, np.array(col["scale_factor"], dtype=float), reals
