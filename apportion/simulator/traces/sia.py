"""Sia's workloads (`saturn`, `philly`, the `rate_*` samples and the scale workloads) as rigid
jobs for the round-based simulator: the baseline "Gavel + TunedJobs" of Sia's paper, where every
job keeps the GPUs (`num_replicas`) and global batch (`batch_size`) its trace asks for.

Units and conventions:

- a step is one optimizer step at the job's batch M; `total_steps` is the steps its training run
  at M takes to the last epoch (`iteration` of the curves at epoch E_max, linear in M between
  the measured batch sizes);
- `throughput[type]` = M / T_iter / slowdown steps per second on that type, T_iter the true time
  of a step (`simulator.elastic.truth`) on the job's placement there (its GPUs on one node when
  they fit one, else on whole nodes and one more), with the micro-batch ⌈M/R⌉ split into
  accumulation steps no larger than what was measured on that placement (Sia's
  `get_throughput_with_accum`); 0 where the type has fewer GPUs or nothing was measured;
- `restart_seconds` = the model's checkpoint-restore time D (a move costs it that);
- ids as in the workload, arrival its `time`; the cluster: Sia's default 6 × 4 T4, 2 × 8 A100,
  3 × 8 RTX 2080Ti (or the one given).

As a trace kind (`solve simulate sia [WORKLOAD.csv]`, `TraceSpec("sia", ...)`): SOURCE is one of
Sia's workload CSVs (Saturn workload 1 when left out); `cluster` {type: GPUs} takes Sia's GPU
types only (their profiles give the speeds), in nodes of each type's own size unless
`gpus_per_node` is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from apportion.formulations.elastic.goodput import split_batch
from apportion.refdata.sia import (
    SIA_CLUSTER,
    Application,
    ClusterSpec,
    WorkloadJob,
    application,
    read_workload,
    workload,
)
from apportion.simulator.elastic.truth import truth
from apportion.simulator.trace import Cluster, Node, Trace, TraceJob

if TYPE_CHECKING:
    from apportion.simulator.sources import TraceSpec


def rigid_steps(app: Application, batch: int) -> float:
    """Optimizer steps a rigid job at global batch `batch` takes to finish."""
    sizes = np.array([c.batch for c in app.curves], dtype=float)
    last = np.array([c.iteration[app.epochs - 1] for c in app.curves])
    return float(np.interp(batch, sizes, last))


def rigid_placement(gpus: int, per_node: int) -> tuple[int, ...]:
    if gpus <= per_node:
        return (gpus,)
    full, rest = divmod(gpus, per_node)
    return (per_node,) * full + ((rest,) if rest else ())


def rigid_rate(app: Application, gpu: str, gpus: int, batch: int, per_node: int) -> float:
    """Steps per second of the whole job on `gpus` GPUs of `gpu` (0 where nothing measured)."""
    placement = rigid_placement(gpus, per_node)
    measured = truth(app.name, gpu)
    cap = measured.max_local_batch(placement)
    micro, steps = split_batch(
        np.array([float(batch)]), np.array([float(gpus)]), app.init_batch, cap
    )
    b, s = int(micro[0]), int(steps[0])
    b = min(b, math.floor(app.max_batch / (gpus * (s + 1))))
    timed = measured.step_time(placement, b)
    if timed is None:
        return 0.0
    step, sync = timed
    return 1.0 / (step + s * (step - sync)) / app.slowdown


def sia_cluster(cluster: ClusterSpec = SIA_CLUSTER) -> Cluster:
    return Cluster(
        tuple(
            Node(f"{gpu}-{i}", cluster.gpus_per_node[gpu], gpu)
            for gpu, count in cluster.nodes.items()
            for i in range(count)
        )
    )


def read_sia_rigid(
    workload: list[WorkloadJob], cluster: ClusterSpec = SIA_CLUSTER, name: str = "sia"
) -> Trace:
    """The workload's jobs at their trace GPUs and batch size (see the module)."""
    jobs = []
    for job in sorted(workload, key=lambda j: j.time):
        app = application(job.application)
        rates = {
            gpu: rigid_rate(app, gpu, job.num_replicas, job.batch_size, per_node)
            if job.num_replicas <= cluster.gpus[gpu]
            else 0.0
            for gpu, per_node in cluster.gpus_per_node.items()
        }
        jobs.append(
            TraceJob(
                id=job.name,
                arrival=job.time,
                scale_factor=job.num_replicas,
                total_steps=rigid_steps(app, job.batch_size),
                throughput={k: v for k, v in rates.items() if v > 0},
                workload_class=job.application,
                restart_seconds=app.restart_seconds,
            )
        )
    return Trace(name, tuple(jobs), sia_cluster(cluster), source="Sia's workload, rigid jobs")


def from_spec(spec: TraceSpec) -> Trace:
    """The trace a `TraceSpec` of kind `sia` names (see the module)."""
    jobs = read_workload(spec.source) if spec.source else workload("saturn", 1)
    return read_sia_rigid(jobs, spec_cluster(spec.cluster, spec.gpus_per_node))


def spec_cluster(gpus: Mapping[str, int] | None, per_node: int | None = None) -> ClusterSpec:
    """Sia's cluster with `gpus` {type: GPUs} of its types in nodes of `per_node` GPUs (each
    type's own node size when None); Sia's default without `gpus`."""
    if gpus is None:
        return SIA_CLUSTER
    unknown = sorted(set(gpus) - set(SIA_CLUSTER.nodes))
    if unknown:
        known = ", ".join(SIA_CLUSTER.nodes)
        raise ValueError(f"sia traces run on Sia's GPU types ({known}); got {', '.join(unknown)}")
    size = {k: per_node or SIA_CLUSTER.gpus_per_node[k] for k in gpus}
    for name, count in gpus.items():
        if count % size[name]:
            raise ValueError(f"{count} {name} GPUs do not make whole nodes of {size[name]}")
    nodes = {k: count // size[k] for k, count in gpus.items()}
    spans = {k: SIA_CLUSTER.max_nodes[k] for k in gpus}
    return ClusterSpec(nodes, size, spans)
