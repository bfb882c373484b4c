"""Traces by kind, as the CLI and sweeps name them: a small picklable `TraceSpec` that a worker
process turns into a `Trace` with the kind's reader (`simulator.kinds`: the kinds, what their
source is and their default cluster).

`load` scales a file trace's arrival rate (2 = arrivals twice as dense) and is the rate itself
for `poisson`; `jobs` keeps the first N jobs of a file trace; `cluster` ({type: GPUs}) with
`gpus_per_node` replaces the trace's cluster (one type for the single-type kinds); `throughputs`,
a file in Gavel's throughputs format, replaces the bundled table of the kinds built on Gavel's
job types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apportion.simulator.kinds import KINDS, find_kind
from apportion.simulator.trace import Cluster, Trace

if TYPE_CHECKING:
    from apportion.refdata.gavel import GavelTable


@dataclass(frozen=True)
class TraceSpec:
    kind: str
    source: str | None = None  # a path; for poisson, the rate in jobs per hour
    jobs: int | None = None
    seed: int = 0
    load: float | None = None
    cluster: Mapping[str, int] | None = field(default=None, hash=False)
    gpus_per_node: int | None = None
    throughputs: str | None = None  # Gavel's throughputs file, for the kinds that read one

    def __post_init__(self) -> None:
        kind = find_kind(self.kind)
        if self.throughputs is not None and not kind.gavel_table:
            readers = ", ".join(k.name for k in KINDS if k.gavel_table)
            raise ValueError(
                f"throughputs: {self.kind} traces carry their own; a Gavel throughputs file "
                f"applies to {readers}"
            )
        if self.jobs is not None and self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.load is not None and not self.load > 0:
            raise ValueError(f"load must be positive, got {self.load}")
        if kind.single_type:
            single_type_nodes(self)  # a cluster these readers cannot build is an error now

    def label(self) -> str:
        where = Path(self.source).stem if self.source and self.kind != "poisson" else ""
        return f"{self.kind}:{where}" if where else self.kind

    def load_trace(self) -> Trace:
        """Read or generate the trace; raises the readers' `TraceError` / `InputError`."""
        kind = find_kind(self.kind)
        trace = kind.read(self)
        if not kind.generated:
            trace = _scaled(_first(trace, self.jobs), self.load)
        return trace


def cluster_of(spec: TraceSpec) -> Cluster | None:
    """The spec's {type: GPUs} cluster in nodes of `gpus_per_node` (4 unless given)."""
    if spec.cluster is None:
        return None
    return Cluster.uniform(dict(spec.cluster), spec.gpus_per_node or 4)


def gavel_table_of(spec: TraceSpec) -> GavelTable | None:
    """The table in the spec's Gavel throughputs file; None: the bundled one."""
    if spec.throughputs is None:
        return None
    from apportion.simulator.traces.gavel_table import read_throughputs

    return read_throughputs(spec.throughputs)


def single_type_nodes(spec: TraceSpec) -> dict[str, Any]:
    """Node arguments of the single-type readers from a {type: GPUs} cluster."""
    if spec.cluster is None:
        return {} if spec.gpus_per_node is None else {"gpus_per_node": spec.gpus_per_node}
    if len(spec.cluster) != 1:
        raise ValueError(f"{spec.kind} traces run on one GPU type; got {dict(spec.cluster)}")
    ((name, count),) = spec.cluster.items()
    per_node = spec.gpus_per_node or 8
    if count % per_node:
        raise ValueError(f"{count} {name} GPUs do not make whole nodes of {per_node}")
    return {"nodes": count // per_node, "gpus_per_node": per_node, "gpu_type": name}


def _first(trace: Trace, count: int | None) -> Trace:
    if count is None or count >= len(trace.jobs):
        return trace
    kept = sorted(trace.jobs, key=lambda job: job.arrival)[:count]
    return replace(trace, jobs=tuple(kept), name=f"{trace.name}[:{count}]")


def scale_load(trace: Trace, load: float) -> Trace:
    """The same jobs arriving `load` times as densely (arrival times ÷ load; deadlines keep
    their distance from arrival)."""
    jobs = []
    for job in trace.jobs:
        arrival = job.arrival / load
        shift = arrival - job.arrival
        deadlines = tuple(replace(d, time=d.time + shift) for d in job.deadlines)
        jobs.append(replace(job, arrival=arrival, deadlines=deadlines))
    return replace(trace, jobs=tuple(jobs), name=f"{trace.name}@load{load:g}")


def _scaled(trace: Trace, load: float | None) -> Trace:
    return trace if load is None or load == 1.0 else scale_load(trace, load)
