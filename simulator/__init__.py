"""Outcomes over time: replay a job trace on a cluster under any policy, round by round, lease by
lease, or placement by placement, and measure what the users of a cluster care about (job
completion times, deadlines met, utilization, contention).

    from simulator import SimConfig, TraceSpec, simulate
    result = simulate(TraceSpec("gavel").load_trace(), SimConfig(policy="max_min_fairness"))
    result.summary["jct_mean"], result.records, result.timeseries

Names are loaded on first use, so importing `simulator.trace` (what the readers need) does not
import the engine, pandas or the solver.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from simulator.config import Mode, Resolve, SimConfig
    from simulator.engine import simulate
    from simulator.result import SimulationResult
    from simulator.sources import TraceSpec, scale_load
    from simulator.sweep import RunSpec, SweepResult, SweepSpec, run_sweep
    from simulator.trace import Cluster, Deadline, Node, Trace, TraceJob

_WHERE = {
    "Mode": "simulator.config",
    "Resolve": "simulator.config",
    "SimConfig": "simulator.config",
    "simulate": "simulator.engine",
    "SimulationResult": "simulator.result",
    "TraceSpec": "simulator.sources",
    "scale_load": "simulator.sources",
    "RunSpec": "simulator.sweep",
    "SweepResult": "simulator.sweep",
    "SweepSpec": "simulator.sweep",
    "run_sweep": "simulator.sweep",
    "Cluster": "simulator.trace",
    "Deadline": "simulator.trace",
    "Node": "simulator.trace",
    "Trace": "simulator.trace",
    "TraceJob": "simulator.trace",
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
