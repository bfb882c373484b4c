"""Traces by kind, as the CLI and sweeps name them: a small picklable `TraceSpec` that a worker
process turns into a `Trace` with the readers of `simulator.traces`.

| kind | source (default: the bundled trace) | default cluster |
|---|---|---|
| `gavel` | a Gavel `.trace` file (96-job `max_min_fairness.trace`) | 8 V100, 16 P100, 24 K80 |
| `poisson` | the arrival rate in jobs per hour (Gavel's generator) | 36 of each type |
| `chronus` | a Chronus CSV, `.csv.gz` or JSON (Philly MIX2, first 200) | 120 × 8 GPUs |
| `deepshare` | a DeepShare trace JSON, with its profiles and CS table (trace0) | 4 × 8 GPUs |
| `tiresias` | a Tiresias CSV (`60_job.csv`) | 16 × 4 GPUs |

`load` scales a file trace's arrival rate (2 = arrivals twice as dense) and is the rate itself
for `poisson`; `jobs` keeps the first N jobs of a file trace; `cluster` ({type: GPUs}) with
`gpus_per_node` replaces the trace's cluster (one type for the single-type kinds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from apportion.simulator.trace import Cluster, Trace

KINDS = ("gavel", "poisson", "chronus", "deepshare", "tiresias")
SINGLE_TYPE = frozenset({"chronus", "deepshare", "tiresias"})


@dataclass(frozen=True)
class TraceSpec:
    kind: str
    source: str | None = None  # a path; for poisson, the rate in jobs per hour
    jobs: int | None = None
    seed: int = 0
    load: float | None = None
    cluster: Mapping[str, int] | None = field(default=None, hash=False)
    gpus_per_node: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown trace kind {self.kind!r}; choose one of {', '.join(KINDS)}")
        if self.jobs is not None and self.jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {self.jobs}")
        if self.load is not None and not self.load > 0:
            raise ValueError(f"load must be positive, got {self.load}")
        if self.kind in SINGLE_TYPE:
            _single_type(self)  # a cluster these readers cannot build is an error now

    def label(self) -> str:
        where = Path(self.source).stem if self.source and self.kind != "poisson" else ""
        return f"{self.kind}:{where}" if where else self.kind

    def load_trace(self) -> Trace:
        """Read or generate the trace; raises the readers' `TraceError` / `InputError`."""
        trace = _READERS[self.kind](self)
        if self.kind != "poisson":
            trace = _scaled(_first(trace, self.jobs), self.load)
        return trace


def _cluster(spec: TraceSpec) -> Cluster | None:
    if spec.cluster is None:
        return None
    return Cluster.uniform(dict(spec.cluster), spec.gpus_per_node or 4)


def _single_type(spec: TraceSpec) -> dict[str, Any]:
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


def _gavel(spec: TraceSpec) -> Trace:
    from apportion.simulator.traces import read_gavel_trace

    if spec.source is None:
        return read_gavel_trace(cluster=_cluster(spec))
    return read_gavel_trace(spec.source, cluster=_cluster(spec))


def _poisson(spec: TraceSpec) -> Trace:
    from apportion.simulator.traces import poisson_trace

    rate = spec.load if spec.load is not None else float(spec.source or "nan")
    return poisson_trace(rate, spec.jobs or 100, spec.seed, cluster=_cluster(spec))


def _chronus(spec: TraceSpec) -> Trace:
    from apportion.simulator.traces import read_chronus

    nodes = _single_type(spec)
    # The first `jobs` are kept by the reader, so only they must fit a small cluster.
    if spec.source:
        return read_chronus(spec.source, first=spec.jobs, **nodes)
    return read_chronus(first=spec.jobs, **nodes)


def _deepshare(spec: TraceSpec) -> Trace:
    from apportion.simulator.traces import read_deepshare_trace

    nodes = _single_type(spec)
    if spec.source:
        return read_deepshare_trace(spec.source, **nodes)
    return read_deepshare_trace(**nodes)


def _tiresias(spec: TraceSpec) -> Trace:
    from apportion.simulator.traces import read_tiresias_csv

    nodes = _single_type(spec)
    return read_tiresias_csv(spec.source, **nodes) if spec.source else read_tiresias_csv(**nodes)


_READERS = {
    "gavel": _gavel,
    "poisson": _poisson,
    "chronus": _chronus,
    "deepshare": _deepshare,
    "tiresias": _tiresias,
}


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


def chronus_sample(jobs: int, gpus: int, path: Path | None = None) -> Trace:
    """The first `jobs` of a bundled Chronus sample (MIX2's first two hours by default) on one
    type of `gpus` GPUs in 8-GPU nodes, arrivals spaced so that 32 GPUs would be offered 80 % of
    their time, as in the deadlines notebook: contended below 32 GPUs."""
    from apportion.simulator.traces.chronus import MIX2_FIRST_2H

    source = str(path or MIX2_FIRST_2H)
    trace = TraceSpec("chronus", source, jobs=jobs).load_trace()
    arrival = [j.arrival for j in trace.jobs]
    work = sum(j.scale_factor * j.total_steps / j.throughput["gpu"] for j in trace.jobs)
    load = (max(arrival) - min(arrival)) / (work / (32 * 0.8))
    spec = TraceSpec(
        "chronus", source, jobs=jobs, load=load, cluster={"gpu": gpus}, gpus_per_node=8
    )
    return spec.load_trace()
