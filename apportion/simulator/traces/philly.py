"""The Philly setup of Tiresias's experiments: the Chronus artifact's Philly MIX2 trace, its first
three days thinned to 128/960 of the jobs (`refdata.tiresias.PHILLY_SAMPLE`), on Tiresias's
`n32g4` cluster (32 nodes × 4 GPUs = 128), with the slowdown of a skewed model that is spread
(`simulator.traces.tiresias.with_spread_slowdown`).

The thinning keeps the trace's load per GPU: Philly's 960 GPUs carried these jobs, a 128-GPU
cluster carries each of them with probability 128/960. Rows are read as `read_chronus_csv` reads
them (minutes → seconds, durations at 1 step/s on one type, model names as workload classes);
`TraceSpec.load` makes arrivals denser, `jobs` keeps the first N. Another Chronus CSV may be
named as the source; `cluster` and `gpus_per_node` replace the nodes (4 GPUs per node unless
given).
"""

from __future__ import annotations

from dataclasses import replace

from apportion.simulator.sources import TraceSpec, single_type_nodes
from apportion.simulator.trace import Trace
from apportion.simulator.traces.chronus import read_chronus_csv
from apportion.simulator.traces.tiresias import with_spread_slowdown

NODES, GPUS_PER_NODE = 32, 4


def read_philly(
    path: str | None = None,
    *,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = "gpu",
) -> Trace:
    from apportion.refdata.tiresias import PHILLY_SAMPLE

    source = path or str(PHILLY_SAMPLE)
    trace = read_chronus_csv(source, nodes=nodes, gpus_per_node=gpus_per_node, gpu_type=gpu_type)
    trace = replace(trace, name=f"philly-{trace.name}")
    return with_spread_slowdown(trace, gpus_per_node)


def from_spec(spec: TraceSpec) -> Trace:
    """The trace a `TraceSpec` of kind `philly` names."""
    if spec.cluster is None and spec.gpus_per_node is None:
        return read_philly(spec.source)
    shape = single_type_nodes(replace(spec, gpus_per_node=spec.gpus_per_node or GPUS_PER_NODE))
    return read_philly(spec.source, **shape)
