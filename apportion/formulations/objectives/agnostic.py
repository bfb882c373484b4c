"""The throughput a heterogeneity-agnostic objective policy plans with (FORMULATIONS §2b).

An agnostic scheduler knows one speed per job, c_j, and treats every GPU it gives the job
alike: it plans with T'_jk = c_j wherever it may give time, and the jobs then run at their true
T_jk. Two choices make a definition:

- c_j: the job's throughput on `reference_type` when it has one there (Gavel's agnostic
  makespan uses the V100's), else its mean over the cluster's GPUs of the types it can use,
  Σ_k N_k T_jk / Σ_k N_k over those types (what it makes on an average GPU of theirs).
- where time may go: `usable`, the types it can run on (T_jk > 0 and s_j ≤ N_k); or `gavel`,
  every type its gang fits, including types where it makes no progress (Gavel's baseline).
  A job that runs nowhere is left out under both.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.errors import InputError

AgnosticDefinition = Literal["usable", "gavel"]


def planned_throughput(
    problem: ClusterArrays,
    aware: bool,
    definition: AgnosticDefinition = "usable",
    reference_type: str | None = None,
) -> FloatArray:
    """T' (jobs × types): the true T where the job can run when `aware`, else c_j wherever the
    definition lets the job have time; 0 where it may have none."""
    usable = problem.eligible
    true = np.where(usable, problem.throughput, 0.0)
    if aware:
        return true
    counts = problem.gpu_count
    gpus = usable @ counts
    mean = (true @ counts) / np.where(gpus > 0, gpus, 1.0)
    speed = mean
    if reference_type is not None:
        on_reference = problem.throughput[:, problem.gpu_names.index(reference_type)]
        speed = np.where(on_reference > 0, on_reference, mean)
    allowed = usable
    if definition == "gavel":
        fits = problem.scale_factor[:, None] <= counts[None, :]
        runs = np.asarray(usable.any(axis=1), dtype=bool)
        allowed = fits & runs[:, None]
    out: FloatArray = np.where(allowed, speed[:, None], 0.0)
    return out


def check_reference_type(problem: ClusterArrays, aware: bool, reference_type: str | None) -> None:
    """`reference_type` names a GPU type of the snapshot, and only an agnostic plan reads it."""
    if reference_type is None:
        return
    where = ("options", "reference_type")
    if aware:
        raise InputError.single(where, "is read only with heterogeneity_aware=false")
    if reference_type not in problem.gpu_names:
        known = ", ".join(problem.gpu_names)
        raise InputError.single(
            where, f"unknown GPU type {reference_type!r}; the snapshot has {known}"
        )
