"""A second scheduler integration, in memory, written against the framework's interface only:
nodes with typed GPUs, a queue of jobs, two verbs (`place` then `run` to start a job, `stop`
to put it back in the queue; there is no verb that removes a job) and a clock the test moves.
It keeps its own account of where each job ran, to check the controller's ledger against, and
can be told to fail: a read, or any command matching a prefix."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from apportion.adapters.framework import (
    Command,
    Commands,
    EnactError,
    Job,
    Managed,
    ReadError,
    Seen,
)


@dataclass
class MemoryJob:
    id: str
    key: str
    gpus: int
    throughput: dict[str, float]
    gpu_type: str | None = None
    placement: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    counted: float = 0.0  # the cluster's own account runs up to here
    intended: tuple[str, dict[str, int]] | None = None  # set by `place`, used by `run`


@dataclass
class MemoryCluster:
    nodes: dict[str, tuple[str, int]]
    jobs: dict[str, MemoryJob] = field(default_factory=dict)
    clock: float = 1_000_000.0
    fail_read: str | None = None
    refuse: tuple[str, ...] = ()  # commands starting with this are refused
    enacted: list[Command] = field(default_factory=list)
    ran: dict[str, dict[str, float]] = field(default_factory=dict)  # its own account

    def add(self, job_id: str, key: str, gpus: int, throughput: dict[str, float]) -> None:
        self.jobs[job_id] = MemoryJob(job_id, key, gpus, throughput)

    def used(self, node: str) -> int:
        return sum(j.placement.get(node, 0) for j in self.jobs.values())

    def settle(self) -> None:
        """Count every running job's time up to the clock (its own account)."""
        for job in self.jobs.values():
            if job.gpu_type is not None:
                mine = self.ran.setdefault(job.id, {})
                mine[job.gpu_type] = mine.get(job.gpu_type, 0.0) + self.clock - job.counted
                job.counted = self.clock

    def fingerprint(self) -> dict[str, tuple[object, ...]]:
        return {j: (x.gpu_type, dict(x.placement), x.started) for j, x in self.jobs.items()}


class MemoryIntegration:
    """The required interface, and nothing else: no optional capability."""

    name = "memory"

    def __init__(self, cluster: MemoryCluster) -> None:
        self.cluster = cluster

    def read(self) -> MemoryCluster:
        if self.cluster.fail_read is not None:
            raise ReadError(self.cluster.fail_read)
        return copy.deepcopy(self.cluster)

    def seen(self, state: MemoryCluster) -> Iterable[Seen]:
        return [Seen(j.id, j.gpu_type, j.started) for j in state.jobs.values()]

    def managed(self, state: MemoryCluster) -> Managed[MemoryJob]:
        jobs = [
            Job(
                id=j.id,
                key=j.key,
                gpus=j.gpus,
                throughput=dict(j.throughput),
                source=j,
                gpu_type=j.gpu_type,
                placement=dict(j.placement),
            )
            for j in state.jobs.values()
        ]
        return Managed(nodes=dict(state.nodes), jobs=jobs)

    def start(
        self, job: Job[MemoryJob], gpu_type: str, placement: Mapping[str, int], rank: int
    ) -> Commands:
        where = ",".join(f"{n}:{g}" for n, g in placement.items())
        return (("place", job.id, gpu_type, where), ("run", job.id))

    def stop(self, job: Job[MemoryJob]) -> Commands:
        return (("stop", job.id),)

    def hold(self, job: Job[MemoryJob]) -> Commands:
        return ()  # a queued job never starts by itself here

    def enact(self, command: Command) -> None:
        if command[: len(self.cluster.refuse)] == self.cluster.refuse and self.cluster.refuse:
            raise EnactError(f"refused: {' '.join(command)}")
        verb, job_id, *rest = command
        job = self.cluster.jobs[job_id]
        if verb == "place":
            placement = {n: int(g) for n, _, g in (p.partition(":") for p in rest[1].split(","))}
            job.intended = (rest[0], placement)
        elif verb == "run":
            self._run(job)
        elif verb == "stop":
            self.cluster.settle()
            job.gpu_type, job.placement, job.intended = None, {}, None
        self.cluster.enacted.append(command)

    def _run(self, job: MemoryJob) -> None:
        if job.intended is None or job.gpu_type is not None:
            raise EnactError(f"job {job.id}: not placed, or running")
        kind, placement = job.intended
        for node, gpus in placement.items():
            node_type, total = self.cluster.nodes[node]
            if node_type != kind or self.cluster.used(node) + gpus > total:
                raise EnactError(f"job {job.id}: {node} has no {gpus} free {kind} GPUs")
        job.gpu_type, job.placement = kind, placement
        job.started = job.counted = self.cluster.clock

    def show(self, command: Command) -> str:
        return " ".join(command)
