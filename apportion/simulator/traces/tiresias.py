"""Tiresias's job trace (NSDI'19 simulator, `60_job.csv`) as a `Trace`.

Columns `job_id, num_gpu, submit_time, iterations, model_name, duration, interval`; times in
seconds. One GPU type (default "gpu") at 1 step/s and total_steps = duration in seconds
(`simulator.traces.durations`); arrival = submit_time; workload_class = model_name; ids
`job-<job_id>`; sorted by arrival. The cluster: `nodes` nodes of `gpus_per_node` GPUs (default
Tiresias's `cluster_spec.csv`: 16 × 4).
"""

from __future__ import annotations

from pathlib import Path

from apportion.refdata import SOURCE
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
