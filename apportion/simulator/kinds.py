"""Trace kinds by name, as `solve simulate KIND` and `TraceSpec` name them. Each entry says
where its reader is (a module with `from_spec(spec) -> Trace`), so naming a kind imports only
its reader, and the command line's grammar reads the names without loading the simulator.

Adding a trace format: a reader module under `simulator/traces/` with its `from_spec`, one
`TraceKind` line here, and its tests (docs/ARCHITECTURE.md, "Adding a trace format").
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from apportion.simulator.sources import TraceSpec
    from apportion.simulator.trace import Trace


@dataclass(frozen=True)
class TraceKind:
    name: str
    module: str  # the reader: a module with `from_spec(spec: TraceSpec) -> Trace`
    source: str  # what SOURCE names (left out: the bundled trace)
    cluster: str  # the default cluster, in words
    #: The reader builds a one-type cluster of whole nodes (`cluster` takes one type).
    single_type: bool = False
    #: A generator rather than a file: `jobs` and `load` are its own parameters, not cuts
    #: and scalings applied to what it read.
    generated: bool = False
    #: Jobs are Gavel job types with throughputs from its table (a throughputs file replaces it).
    gavel_table: bool = False

    def read(self, spec: TraceSpec) -> Trace:
        trace: Trace = importlib.import_module(self.module).from_spec(spec)
        return trace


KINDS: tuple[TraceKind, ...] = (
    TraceKind(
        "gavel",
        "apportion.simulator.traces.gavel",
        "a Gavel .trace file (96-job max_min_fairness.trace)",
        "8 V100, 16 P100, 24 K80",
        gavel_table=True,
    ),
    TraceKind(
        "poisson",
        "apportion.simulator.traces.poisson",
        "the arrival rate in jobs per hour (Gavel's generator)",
        "36 of each type",
        generated=True,
        gavel_table=True,
    ),
    TraceKind(
        "chronus",
        "apportion.simulator.traces.chronus",
        "a Chronus CSV, .csv.gz or JSON (Philly MIX2, first 200)",
        "120 × 8 GPUs",
        single_type=True,
    ),
    TraceKind(
        "deepshare",
        "apportion.simulator.traces.deepshare",
        "a DeepShare trace JSON, with its profiles and CS table (trace0)",
        "4 × 8 GPUs",
        single_type=True,
    ),
    TraceKind(
        "tiresias",
        "apportion.simulator.traces.tiresias",
        "a Tiresias CSV (60_job.csv)",
        "16 × 4 GPUs",
        single_type=True,
    ),
    TraceKind(
        "philly",
        "apportion.simulator.traces.philly",
        "a Chronus CSV (Philly MIX2, 3 days thinned to 128/960)",
        "32 × 4 GPUs, spread skewed models 1.67× slower",
        single_type=True,
    ),
    TraceKind(
        "sia",
        "apportion.simulator.traces.sia",
        "a Sia workload CSV, rigid jobs (Saturn workload 1)",
        "6 × 4 T4, 2 × 8 A100, 3 × 8 RTX 2080Ti",
    ),
)

BY_NAME = {kind.name: kind for kind in KINDS}
NAMES = tuple(BY_NAME)


def find_kind(name: str) -> TraceKind:
    """The kind called `name`; raises ValueError naming the known ones."""
    kind = BY_NAME.get(name)
    if kind is None:
        raise ValueError(f"unknown trace kind {name!r}; choose one of {', '.join(NAMES)}")
    return kind
