"""Deciders of the elastic simulation that ask one of apportion's elastic policies (`sia`,
`ones`, `elastic_max_goodput`): each round a snapshot of the active jobs with the configurations
Sia's scheduler would offer them (`belief`), solved in process, enacted on nodes by
`mechanism.elastic`. A solve that gives no usable answer leaves every job where it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mechanism.elastic import Want, place
from refdata.sia import ClusterSpec
from simulator.elastic.belief import Shape, cluster_shapes, job_document, offer
from simulator.elastic.engine import Decision, node_list
from simulator.elastic.jobs import ElasticJob

USABLE = frozenset({"optimal", "feasible"})


class ApportionElastic:
    """An apportion policy over the configurations Sia offers each job."""

    def __init__(self, policy: str, cluster: ClusterSpec, options: Mapping[str, Any] | None = None):
        self.name = policy
        self.policy = policy
        self.options = dict(options or {})
        self.cluster = cluster
        self.shapes = cluster_shapes(cluster)
        self.nodes = node_list(cluster)
        self.gpu_types = [{"name": k, "count": n} for k, n in cluster.gpus.items()]
        self.solver_seconds: list[float] = []

    def decide(self, now: float, active: list[ElasticJob]) -> Decision:
        from solver.pipeline import solve

        offers = {job.name: offer(job, self.shapes, self.cluster) for job in active}
        snapshot = {
            "gpu_types": self.gpu_types,
            "jobs": [job_document(job, now, offers[job.name]) for job in active],
        }
        result = solve(snapshot, policy=self.policy, options=self.options)
        self.solver_seconds.append(result.solver.total_seconds)
        held = {job.name: job.nodes for job in active if job.nodes}
        if result.status.value not in USABLE:
            return held
        wanted: dict[str, Want] = {}
        for job, answer in zip(active, result.jobs, strict=True):
            label = answer.metrics.get("configuration")
            if isinstance(label, int):
                shape: Shape = offers[job.name][label][0]
                wanted[job.name] = Want(shape.gpu, shape.gpus, shape.nodes)
        return place(self.nodes, wanted, held).placements
