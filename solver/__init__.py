"""apportion: exact LP/MILP policies for GPU clusters.

from solver import solve
result = solve(snapshot_dict, policy="max_min_fairness")
result.status, result.objective, result.job("job-1").allocation
solve(snapshot_dict, options={"backend": "pulp", "solver": "CBC"})
export_model(snapshot_dict, "model.lp")   # the model that would be solved, not solving it

Names are loaded on first use, so importing one part of the package (the CLI's `--help`, the
model layer) does not import the rest.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from solver.errors import FieldError, InputError
    from solver.pipeline import ExportedModel, export_model, solve
    from solver.result import GpuTypeUsage, JobResult, SolveResult, SolverReport
    from solver.snapshot import GpuType, Job, Snapshot, parse_snapshot
    from solver.status import Status, Termination

_WHERE = {
    "ExportedModel": "solver.pipeline",
    "export_model": "solver.pipeline",
    "solve": "solver.pipeline",
    "FieldError": "solver.errors",
    "InputError": "solver.errors",
    "GpuTypeUsage": "solver.result",
    "JobResult": "solver.result",
    "SolveResult": "solver.result",
    "SolverReport": "solver.result",
    "GpuType": "solver.snapshot",
    "Job": "solver.snapshot",
    "Snapshot": "solver.snapshot",
    "parse_snapshot": "solver.snapshot",
    "Status": "solver.status",
    "Termination": "solver.status",
}

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
    "Termination",
    "export_model",
    "parse_snapshot",
    "solve",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
