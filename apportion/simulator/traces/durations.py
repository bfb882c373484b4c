"""Traces that give run times, not throughputs (Chronus's Philly traces, Tiresias's).

Such a trace knows how long a job runs on the GPUs it asked for, nothing per GPU type. The
convention that makes it a `Trace`: one GPU type (`gpu_type`, default "gpu"), every job's
throughput on it 1 step/s, and `total_steps` = its run time in seconds. A job given its GPUs for
its whole run then finishes exactly when the trace says it does; anything that changes the
throughput (contention, placement) stretches the run in proportion.
"""

from __future__ import annotations

from apportion.simulator.trace import Cluster, Deadline, TraceJob
from apportion.solver.errors import InputError

DEFAULT_GPU_TYPE = "gpu"
STEPS_PER_SECOND = 1.0


def single_type_cluster(nodes: int, gpus_per_node: int, gpu_type: str) -> Cluster:
    """`nodes` nodes of `gpus_per_node` GPUs, all of `gpu_type`."""
    if nodes < 1 or gpus_per_node < 1:
        shape = f"{nodes} × {gpus_per_node}"
        raise InputError.single(("cluster",), f"needs a node and a GPU per node, got {shape}")
    return Cluster.uniform({gpu_type: nodes * gpus_per_node}, gpus_per_node)


def timed_job(
    job_id: str,
    *,
    gpus: int,
    arrival: float,
    run_seconds: float,
    gpu_type: str,
    workload_class: str | None = None,
    entity: str | None = None,
    deadlines: tuple[Deadline, ...] = (),
    job_class: str | None = None,
) -> TraceJob:
    """A job that runs `run_seconds` on `gpus` GPUs: that many steps at 1 step/s."""
    return TraceJob(
        id=job_id,
        arrival=arrival,
        scale_factor=gpus,
        total_steps=run_seconds * STEPS_PER_SECOND,
        throughput={gpu_type: STEPS_PER_SECOND},
        workload_class=workload_class,
        entity=entity,
        deadlines=deadlines,
        job_class=job_class,
    )
