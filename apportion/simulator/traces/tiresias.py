"""Tiresias's job trace (NSDI'19 simulator, `60_job.csv`) as a `Trace`, the slowdown of a
skewed model that is spread, and the Philly setup its experiments replay.

Columns `job_id, num_gpu, submit_time, iterations, model_name, duration, interval`; times in
seconds. One GPU type (default "gpu") at 1 step/s and total_steps = duration in seconds
(`simulator.traces.durations`); arrival = submit_time; workload_class = model_name; ids
`job-<job_id>`; sorted by arrival. The cluster: `nodes` nodes of `gpus_per_node` GPUs (default
Tiresias's `cluster_spec.csv`: 16 × 4).

**The slowdown model** (`with_spread_slowdown`). Tiresias measured that only models dominated by
one huge tensor (the VGG family, AlexNet) care where their workers run (§2.2, Fig. 3; Table 6),
and that placing such jobs on the fewest machines made them up to 1.67× faster than placing
them at random (§5.2, Fig. 12), while most other jobs lost little. So: a job whose model's
largest tensor is more than `pack_limit` of it (`refdata.tiresias.skew`), on g ≥ 2 GPUs, runs
at 1/`slowdown` of its speed (1/1.67 ≈ 0.6) whenever its GPUs span more nodes than the fewest
that hold g; every other job, and every job on its fewest nodes, runs at full speed. It is the
same on every extra node (the paper gives one factor, for random placement). The trace carries
it as each job's throughput by nodes spanned (`TraceJob.placement_throughput`), which every
enactment applies.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from apportion.refdata import SOURCE
from apportion.simulator.sources import TraceSpec, single_type_nodes
from apportion.simulator.trace import Trace, TraceJob
from apportion.simulator.traces.durations import DEFAULT_GPU_TYPE, single_type_cluster, timed_job
from apportion.simulator.traces.errors import TraceError
from apportion.simulator.traces.parsing import Row, csv_rows

JOBS_60 = SOURCE / "tiresias_60_job.csv"
CSV_COLUMNS = ("job_id", "num_gpu", "submit_time", "model_name", "duration")
NODES = 16
GPUS_PER_NODE = 4


def read_tiresias_csv(
    path: str | Path = JOBS_60,
    *,
    nodes: int = NODES,
    gpus_per_node: int = GPUS_PER_NODE,
    gpu_type: str = DEFAULT_GPU_TYPE,
) -> Trace:
    """A Tiresias CSV trace. Raises a `TraceError` naming the line for a malformed row, a
    non-positive GPU count or duration, a negative submit time, or a job larger than the
    cluster."""
    source = Path(path)
    capacity = nodes * gpus_per_node
    cluster = single_type_cluster(nodes, gpus_per_node, gpu_type)
    jobs = [_job(row, gpu_type, capacity) for row in csv_rows(source, CSV_COLUMNS)]
    if not jobs:
        raise TraceError(source, "no jobs in the file")
    return Trace(
        name=f"tiresias-{source.stem.removeprefix('tiresias_')}",
        jobs=tuple(sorted(jobs, key=lambda job: job.arrival)),
        cluster=cluster,
        source=str(source),
    )


def _job(row: Row, gpu_type: str, capacity: int) -> TraceJob:
    gpus = row.integer("num_gpu", minimum=1)
    if gpus > capacity:
        raise row.error(f"num_gpu is {gpus}, more than the cluster's {capacity} GPUs")
    return timed_job(
        f"job-{row.integer('job_id')}",
        gpus=gpus,
        arrival=row.number("submit_time"),
        run_seconds=row.number("duration", strict=True),
        gpu_type=gpu_type,
        workload_class=row.text("model_name"),
    )


def from_spec(spec: TraceSpec) -> Trace:
    """The trace a `TraceSpec` of kind `tiresias` names."""
    nodes = single_type_nodes(spec)
    return read_tiresias_csv(spec.source, **nodes) if spec.source else read_tiresias_csv(**nodes)


#: How much faster a skewed model ran on the fewest machines than placed at random (§5.2).
SPREAD_SLOWDOWN = 1.67
PACK_LIMIT = 0.5


def with_spread_slowdown(
    trace: Trace,
    gpus_per_node: int,
    slowdown: float = SPREAD_SLOWDOWN,
    pack_limit: float = PACK_LIMIT,
) -> Trace:
    """The trace with the slowdown model above, on nodes of `gpus_per_node` GPUs."""
    from apportion.refdata.tiresias import skew

    jobs = []
    for job in trace.jobs:
        g = job.scale_factor
        share = skew(job.workload_class)
        if g < 2 or share is None or share <= pack_limit:
            jobs.append(job)
            continue
        fewest = -(-g // gpus_per_node)
        ((_, speed),) = job.throughput.items()
        spread = {n: speed / slowdown for n in range(fewest + 1, g + 1)}
        jobs.append(replace(job, placement_throughput={fewest: speed, **spread}))
    return replace(trace, jobs=tuple(jobs))
