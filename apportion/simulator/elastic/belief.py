"""What Sia's scheduler offers each job (its `get_sia_multi_job_info` and goodput matrices): a
configuration per node shape of every GPU type, up to the job's replica limit, valued with the
job's own goodput model.

- Shapes: 1, 2, 4, … GPUs on one node, then whole nodes, up to the profiled node count.
- Replica limit: min(max(2 × the most replicas it ran on, 1), 64, M_max // b_min) per type, the
  largest over the types (Sia shares it): a job starts on one GPU and at most doubles per round.
- Value: the goodput at the best batch size on a type the job has run on; on another type, the
  goodput of the first type it has a model for (same replicas, nodes as that type needs) times
  the ratio of the two types' single-GPU throughputs (Sia's projection); a job without any
  model gets goodput 1 on every one-GPU shape only, or, when its throughputs are known before
  it first runs (`known_start`, Sia's `sia_read_throughputs_before_first_run`), its
  application's single-GPU throughput on each type, so the types are no longer tied.
- Batch sizes valued: up to the trace's batch size of the job (Sia's `get_speedup_fn` bounds
  them by its `target_batch_size`), or exactly b_min·R where that is larger; the job itself then
  trains at the best batch up to its model's largest (`ElasticJob.choose_batch`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from apportion.formulations.elastic.goodput import BatchChoice, JobModel, best_batch
from apportion.formulations.elastic.shapes import node_shapes
from apportion.refdata.sia import ClusterSpec
from apportion.simulator.elastic.jobs import ElasticJob

#: Sia's simulator offers no job more GPUs than this.
MAX_REPLICAS = 64


@dataclass(frozen=True)
class Shape:
    gpu: str
    nodes: int
    gpus: int

    def placement(self, per_node: int) -> tuple[int, ...]:
        """Per-node GPUs: one node, or whole nodes."""
        if self.nodes == 1:
            return (self.gpus,)
        return (per_node,) * self.nodes


def cluster_shapes(cluster: ClusterSpec) -> list[Shape]:
    out = []
    for gpu, per_node in cluster.gpus_per_node.items():
        nodes = min(cluster.nodes[gpu], cluster.max_nodes[gpu])
        out += [Shape(gpu, n, g) for n, g in node_shapes(per_node, nodes)]
    return out


def replica_limit(job: ElasticJob, cluster: ClusterSpec) -> int:
    app = job.app
    limits = [
        min(
            max(2 * job.max_profiled_replicas(gpu), 1),
            MAX_REPLICAS,
            app.max_batch // app.min_local_batch(gpu),
        )
        for gpu in cluster.gpus_per_node
    ]
    return max(limits)


def offer(
    job: ElasticJob, shapes: list[Shape], cluster: ClusterSpec, known_start: bool = False
) -> list[tuple[Shape, dict[str, Any]]]:
    """(shape, configuration) for every shape the job may take, with its goodput."""
    limit = replica_limit(job, cluster)
    allowed = [s for s in shapes if s.gpus <= limit]
    modelled = [g for g in cluster.gpus_per_node if job.model(g) is not None]
    if not modelled:
        return [(s, first_run(job, s.gpu, known_start)) for s in allowed if s.gpus == 1]
    out: list[tuple[Shape, dict[str, Any]]] = []
    for gpu in cluster.gpus_per_node:
        mine = [s for s in allowed if s.gpu == gpu]
        if not mine:
            continue
        source = gpu if gpu in modelled else modelled[0]
        per_node = cluster.gpus_per_node[source]
        gpus = np.array([s.gpus for s in mine], dtype=float)
        nodes = (
            np.array([s.nodes for s in mine], dtype=float)
            if source == gpu
            else np.ceil(gpus / per_node)
        )
        model = job.model(source)
        assert model is not None
        best = valued(model, nodes, gpus, job.target_batch)
        ratio = 1.0
        if source != gpu:
            profiles = job.app.profiles
            ratio = profiles[gpu].single_gpu_throughput() / profiles[source].single_gpu_throughput()
        for i, shape in enumerate(mine):
            if best.goodput[i] <= 0:
                continue
            out.append(
                (
                    shape,
                    {
                        "gpu_type": gpu,
                        "gpus": shape.gpus,
                        "nodes": shape.nodes,
                        "batch_size": int(best.batch[i]),
                        "local_batch": int(best.local_batch[i]),
                        "accumulation_steps": int(best.accumulation[i]),
                        "throughput": float(best.throughput[i] * ratio),
                        "goodput": float(best.goodput[i] * ratio),
                    },
                )
            )
    return out


def first_run(job: ElasticJob, gpu: str, known_start: bool) -> dict[str, Any]:
    """One GPU of `gpu` for a job that has not run: worth its application's single-GPU
    throughput on the type when that is known at the start, else 1 on every type (a tie)."""
    goodput = job.app.profiles[gpu].single_gpu_throughput() if known_start else 1.0
    return {"gpu_type": gpu, "gpus": 1, "nodes": 1, "goodput": goodput}


def valued(model: JobModel, nodes: Any, gpus: Any, target: int | None) -> BatchChoice:
    """`best_batch` over batch sizes up to `target` (all of the model's without one); where
    b_min·R exceeds `target`, at b_min·R (Sia's `GoodputFunction.optimize` then samples that
    one size)."""
    if target is None:
        return best_batch(model, nodes, gpus)
    capped = replace(model, max_batch=float(max(target, model.init_batch)))
    best = best_batch(capped, nodes, gpus)
    low = np.maximum(model.init_batch, model.min_local_batch * np.asarray(gpus, dtype=float))
    for i in np.flatnonzero(low > capped.max_batch):
        one = best_batch(replace(model, max_batch=float(low[i])), [nodes[i]], [gpus[i]])
        for name in ("goodput", "throughput", "local_batch", "accumulation", "batch"):
            getattr(best, name)[i] = getattr(one, name)[0]
    return best


def job_document(
    job: ElasticJob,
    now: float,
    offered: list[tuple[Shape, dict[str, Any]]],
    chosen: Shape | None = None,
) -> dict[str, Any]:
    """The job as the snapshot's `elastic` job: its configurations and where it stands: the
    configuration the policy chose for it last (`chosen`, as Sia's policy remembers it; by
    default read from the nodes it runs on)."""
    spec: dict[str, Any] = {
        "configurations": [config for _, config in offered],
        "age": max(now - job.arrival, 0.0),
        "restarts": max(job.restarts, 0),
        "restart_seconds": job.app.restart_factor_seconds,
        # work left in samples at the initial batch's efficiency (goodput × seconds)
        "remaining": job.remaining() * job.app.init_batch,
    }
    if job.gpu is not None and job.placement:
        shape = chosen or Shape(job.gpu, len(job.placement), job.gpus)
        current = {"gpu_type": shape.gpu, "gpus": shape.gpus, "nodes": shape.nodes}
        if any(_matches(config, current) for _, config in offered):
            spec["current"] = current
            spec["pinned"] = job.delay > 0
    return {"id": job.name, "elastic": spec}


def _matches(config: dict[str, Any], current: dict[str, Any]) -> bool:
    return all(config[key] == current[key] for key in ("gpu_type", "gpus", "nodes"))
