"""apportion: exact LP/MILP policies for GPU clusters.

from apportion.solver import solve
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
    from apportion.solver.errors import FieldError, InputError
    from apportion.solver.pipeline import ExportedModel, export_model, solve
    from apportion.solver.result import GpuTypeUsage, JobResult, SolveResult, SolverReport
    from apportion.solver.snapshot import GpuType, Job, Snapshot, parse_snapshot
    from apportion.solver.status import Status

_WHERE = {
    "ExportedModel": "apportion.solver.pipeline",
    "export_model": "apportion.solver.pipeline",
    "solve": "apportion.solver.pipeline",
    "FieldError": "apportion.solver.errors",
    "InputError": "apportion.solver.errors",
    "GpuTypeUsage": "apportion.solver.result",
    "JobResult": "apportion.solver.result",
    "SolveResult": "apportion.solver.result",
    "SolverReport": "apportion.solver.result",
    "GpuType": "apportion.solver.snapshot",
    "Job": "apportion.solver.snapshot",
    "Snapshot": "apportion.solver.snapshot",
    "parse_snapshot": "apportion.solver.snapshot",
    "Status": "apportion.solver.status",
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
