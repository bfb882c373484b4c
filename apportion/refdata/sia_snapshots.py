"""Elastic snapshots from Sia's data: the jobs of a workload as the `sia` policy family sees them
in one scheduling round, for benchmarks, tests and notebooks.

Each job's goodput model is the throughput model fitted to the whole profile of its model on each
GPU type (`formulations.elastic.fit`; the simulator instead fits what each job has run) and the
gradient statistics of its training run at the smallest batch, at the job's epoch. A job "with
no model yet" (a fresh arrival) is offered what Sia offers it: one GPU of any type, goodput 1.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from apportion.formulations.elastic.fit import fit_perf_params
from apportion.formulations.elastic.goodput import JobModel, PerfParams, best_batch
from apportion.formulations.elastic.shapes import node_shapes
from apportion.refdata.sia import SIA_CLUSTER, ClusterSpec, WorkloadJob, application, profile

#: Most GPUs Sia offers a job (its simulator's cap), before the batch limit M_max // b_min.
MAX_GPUS = 64


@cache
def fitted(model: str, gpu: str) -> PerfParams:
    """The throughput model fitted to the whole profile of `model` on `gpu`."""
    p = profile(model, gpu)
    return fit_perf_params(p.nodes, p.replicas, p.local_batch, p.step_time, p.sync_time)


def job_model(model: str, gpu: str, epoch: int) -> JobModel:
    """What a scheduler knows of a job of `model` on `gpu` at `epoch` (0-based)."""
    app = application(model)
    first = app.curves[0]
    e = min(max(epoch, 0), first.grad_sqr.size - 1)
    return JobModel(
        fitted(model, gpu),
        float(app.init_batch),
        float(app.max_batch),
        float(first.grad_sqr[e]),
        float(first.grad_var[e]),
        float(app.min_local_batch(gpu)),
        float(app.max_local_batch(gpu)),
    )


def max_gpus(model: str, profiled: int = MAX_GPUS) -> int:
    """Sia's cap: min(max(2 × the most replicas the job ran on, 1), 64, M_max // b_min)."""
    app = application(model)
    least = min(app.min_local_batch(g) for g in app.profiles)
    return int(min(max(2 * profiled, 1), MAX_GPUS, app.max_batch // least))


def configurations(model: str, epoch: int, cluster: ClusterSpec, most: int) -> list[dict[str, Any]]:
    """A configuration per node shape of every GPU type (at most `most` GPUs), each at its best
    batch size."""
    out: list[dict[str, Any]] = []
    for gpu, per_node in cluster.gpus_per_node.items():
        nodes = min(cluster.nodes[gpu], cluster.max_nodes[gpu])
        shapes = [s for s in node_shapes(per_node, nodes) if s[1] <= most]
        if not shapes:
            continue
        n, g = (np.array(v, dtype=float) for v in zip(*shapes, strict=True))
        best = best_batch(job_model(model, gpu, epoch), n, g)
        for i in np.flatnonzero(best.goodput > 0).tolist():
            out.append(
                {
                    "gpu_type": gpu,
                    "gpus": int(g[i]),
                    "nodes": int(n[i]),
                    "batch_size": int(best.batch[i]),
                    "local_batch": int(best.local_batch[i]),
                    "accumulation_steps": int(best.accumulation[i]),
                    "throughput": float(best.throughput[i]),
                    "goodput": float(best.goodput[i]),
                }
            )
    return out


def fresh_configurations(cluster: ClusterSpec) -> list[dict[str, Any]]:
    """Sia's offer to a job without a model: one GPU of any type, goodput 1."""
    return [{"gpu_type": gpu, "gpus": 1, "goodput": 1.0} for gpu in cluster.gpus_per_node]


def round_snapshot(
    jobs: list[WorkloadJob],
    cluster: ClusterSpec = SIA_CLUSTER,
    *,
    fresh: bool = False,
    running: float = 0.5,
    seed: int = 0,
) -> dict[str, Any]:
    """One round with `jobs` active: each at a random epoch with a random `max_gpus` of Sia's
    doubling rule, a share `running` of them in a random configuration with an age and restarts
    (or, with `fresh`, every job just arrived)."""
    rng = np.random.default_rng(seed)
    out = []
    for job in jobs:
        app = application(job.application)
        spec: dict[str, Any]
        if fresh:
            spec = {"configurations": fresh_configurations(cluster)}
        else:
            epoch = int(rng.integers(0, app.epochs))
            most = max_gpus(job.application, int(2 ** rng.integers(0, 6)))
            spec = {"configurations": configurations(job.application, epoch, cluster, most)}
            if spec["configurations"] and rng.random() < running:
                now = spec["configurations"][int(rng.integers(len(spec["configurations"])))]
                spec.update(
                    current={"gpu_type": now["gpu_type"], "gpus": now["gpus"]},
                    age=float(rng.uniform(60, 20_000)),
                    restarts=int(rng.integers(0, 5)),
                    restart_seconds=app.restart_factor_seconds,
                )
        out.append({"id": job.name, "elastic": spec})
    return {"gpu_types": cluster_types(cluster), "nodes": cluster_nodes(cluster), "jobs": out}


def cluster_types(cluster: ClusterSpec) -> list[dict[str, Any]]:
    return [{"name": k, "count": n} for k, n in cluster.gpus.items()]


def cluster_nodes(cluster: ClusterSpec) -> list[dict[str, Any]]:
    return [
        {"id": f"{gpu}-{i}", "gpus": cluster.gpus_per_node[gpu], "gpu_type": gpu}
        for gpu, count in cluster.nodes.items()
        for i in range(count)
    ]
