"""Remaining times known within a bound (FORMULATIONS §6a).

A job's true remaining time lies in [E_j (1 − δ_j), E_j (1 + δ_j)]. The leases it needs,
⌈E'/ℓ⌉, and the work left for its last lease grow with E', so the plan that holds for E_j (1 + δ_j)
holds for every E' in the bound: the margin is δ_j itself, per job, not a constant. A remaining
time derived from steps, E_j = R_j / T_j, with the throughput known within T_j (1 ± d), is at most
E_j / (1 − d): δ_j = d / (1 − d) (unbounded at d = 1: no guarantee can hold).
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.snapshot import Job, Snapshot
from apportion.solver.snapshot.view import node_type


def margins(snapshot: Snapshot, safety: float, default: float) -> FloatArray:
    """Per job, the share by which its remaining time is stretched: (1 + safety)(1 + δ_j) − 1,
    δ_j its own `remaining_time_uncertainty`, else the one its throughput bound implies, else
    `default`."""
    gpu = node_type(snapshot, snapshot.nodes[0]) if snapshot.nodes else None
    delta = np.array([_bound(job, gpu, default) for job in snapshot.jobs], dtype=float)
    stretched: FloatArray = (1.0 + safety) * (1.0 + delta) - 1.0
    return stretched


def _bound(job: Job, gpu: str | None, default: float) -> float:
    if job.remaining_time_uncertainty is not None:
        return job.remaining_time_uncertainty
    derived = job.remaining_time is None and job.steps_remaining is not None
    bounds = job.throughput_uncertainty or {}
    if not derived or gpu not in bounds:
        return default
    d = bounds[gpu]
    return d / (1.0 - d) if d < 1.0 else float("inf")
