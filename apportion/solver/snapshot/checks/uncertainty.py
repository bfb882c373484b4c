"""Throughput uncertainties name GPU types of the cluster."""

from __future__ import annotations

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.view import SnapshotView


def uncertainty_errors(snapshot: SnapshotView) -> list[FieldError]:
    """A per-type bound for a type the cluster does not have is a typo, not a no-op."""
    known = {g.name for g in snapshot.gpu_types}
    return [
        FieldError(
            ("jobs", i, "throughput_uncertainty", gpu),
            f"unknown GPU type {gpu!r}",
            "unknown_gpu_type",
        )
        for i, job in enumerate(snapshot.jobs)
        if job.throughput_uncertainty
        for gpu in sorted(job.throughput_uncertainty.keys() - known)
    ]
