"""apportion: exact LP/MILP policies for GPU clusters.

from solver import solve
result = solve(snapshot_dict, policy="max_min_fairness")
result.status, result.objective, result.job("job-1").allocation
solve(snapshot_dict, options={"backend": "pulp", "solver": "CBC"})
export_model(snapshot_dict, "model.lp")   # the model that would be solved, not solving it
"""

from __future__ import annotations

from solver.errors import FieldError, InputError
from solver.pipeline import ExportedModel, export_model, solve
from solver.result import GpuTypeUsage, JobResult, SolveResult, SolverReport
from solver.snapshot import GpuType, Job, Snapshot, parse_snapshot
from solver.status import Status

__all__ = [
    "ExportedModel",
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
    "export_model",
    "parse_snapshot",
    "solve",
]
