"""apportion: exact LP/MILP policies for GPU clusters.

from solver import solve
result = solve(snapshot_dict, policy="max_min_fairness")
result.status, result.objective, result.job("job-1").allocation
"""

from __future__ import annotations

from solver.errors import FieldError, InputError
from solver.pipeline import solve
from solver.result import GpuTypeUsage, JobResult, SolveResult, SolverReport
from solver.snapshot import GpuType, Job, Snapshot, parse_snapshot
from solver.status import Status

__all__ = [
    "FieldError",
    "GpuType",
    "GpuTypeUsage",
    "InputError",
    "Job",
    "JobResult",
    "Snapshot",
    "SolveResult",
    "SolverReport",
    "Status",
    "parse_snapshot",
    "solve",
]
