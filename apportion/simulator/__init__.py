"""Outcomes over time: replay a job trace on a cluster under any policy, round by round, lease by
lease, or placement by placement, and measure what the users of a cluster care about (job
completion times, deadlines met, utilization, contention).

    from apportion.simulator import SimConfig, TraceSpec, simulate
    result = simulate(TraceSpec("gavel").load_trace(), SimConfig(policy="max_min_fairness"))
    result.summary["jct_mean"], result.records, result.timeseries

Names are loaded on first use, so importing `simulator.trace` (what the readers need) does not
import the engine, pandas or the solver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apportion.simulator.config import Mode, Resolve, SimConfig
    from apportion.simulator.engine import simulate
    from apportion.simulator.result import SimulationResult
    from apportion.simulator.sources import TraceSpec, scale_load
    from apportion.simulator.sweep import RunSpec, SweepResult, SweepSpec, run_sweep
    from apportion.simulator.trace import Cluster, Deadline, Node, Trace, TraceJob

_WHERE = {
    "Mode": "apportion.simulator.config",
    "Resolve": "apportion.simulator.config",
    "SimConfig": "apportion.simulator.config",
    "simulate": "apportion.simulator.engine",
    "SimulationResult": "apportion.simulator.result",
    "TraceSpec": "apportion.simulator.sources",
    "scale_load": "apportion.simulator.sources",
    "RunSpec": "apportion.simulator.sweep",
    "SweepResult": "apportion.simulator.sweep",
    "SweepSpec": "apportion.simulator.sweep",
    "run_sweep": "apportion.simulator.sweep",
    "Cluster": "apportion.simulator.trace",
    "Deadline": "apportion.simulator.trace",
    "Node": "apportion.simulator.trace",
    "Trace": "apportion.simulator.trace",
    "TraceJob": "apportion.simulator.trace",
}

__all__ = [
    "Cluster",
    "Deadline",
    "Mode",
    "Node",
    "Resolve",
    "RunSpec",
    "SimConfig",
    "SimulationResult",
    "SweepResult",
    "SweepSpec",
    "Trace",
    "TraceJob",
    "TraceSpec",
    "run_sweep",
    "scale_load",
    "simulate",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'simulator' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
