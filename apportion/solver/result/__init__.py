"""The result document (`document`): what every policy returns, in the snapshot's own ids; each
job's answer (`jobs`), kept as columns by the pipeline (`table`, with numpy: imported where used).
"""

from __future__ import annotations

from apportion.solver.result.document import (
    ADVISORY,
    Comparison,
    Explanation,
    GpuChange,
    GpuTypeExplanation,
    GpuTypeUsage,
    JobChange,
    JobExplanation,
    SolveResult,
    SolverReport,
    StageInfo,
)
from apportion.solver.result.jobs import JobResult, JobResultColumns, Metric

__all__ = [
    "ADVISORY",
    "Comparison",
    "Explanation",
    "GpuChange",
    "GpuTypeExplanation",
    "GpuTypeUsage",
    "JobChange",
    "JobExplanation",
    "JobResult",
    "JobResultColumns",
    "Metric",
    "SolveResult",
    "SolverReport",
    "StageInfo",
]
