"""Remaining times known within a bound (FORMULATIONS §6, "Uncertain remaining times").

A job's true remaining time lies in [E_j (1 − δ_j), E_j (1 + δ_j)]. The leases it needs,
⌈E'/ℓ⌉, and the work left for its last lease grow with E', so the plan that holds for E_j (1 + δ_j)
holds for every E' in the bound: the margin is δ_j itself, per job, not a constant.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.snapshot import Snapshot


def margins(snapshot: Snapshot, safety: float, default: float) -> FloatArray:
    """Per job, the share by which its remaining time is stretched: (1 + safety)(1 + δ_j) − 1,
    δ_j its own `remaining_time_uncertainty`, else `default`."""
    delta = np.array(
        [
            default if job.remaining_time_uncertainty is None else job.remaining_time_uncertainty
            for job in snapshot.jobs
        ],
        dtype=float,
    )
    stretched: FloatArray = (1.0 + safety) * (1.0 + delta) - 1.0
    return stretched
