"""From Slurm's view to apportion's: the snapshot a policy solves and the one a round enacts.

GPU types and nodes come from the node GRES types of the usable nodes (`sinfo`): each node
offers its GPUs minus those held by jobs the adapter does not manage (non-GPU work aside, a
running job without a throughput row, a job still completing). A job is managed when it asks
for GPUs, is pending or running, has a throughput row (`mapping`), and its `--constraint` is
empty or one GPU type (the adapter steers the type through that constraint, so it will not
overwrite anything richer). Its scale factor is its GPU count; a running job's GPUs are its
`previous` placement, and its received time comes from the ledger.

The policy sees every managed job. The round sees them all too when running jobs may be
preempted; otherwise (and for running jobs Slurm cannot requeue) a running job is fixed: it
keeps its GPUs, which the round does not hand out, and only the others are scheduled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apportion.adapters.slurm.mapping import Mapped, map_job
from apportion.adapters.slurm.slurmcli import SlurmJob, SlurmNode

#: Pending reasons under which a released job still could not start: they are left alone.
_NOT_STARTABLE = ("Dependency", "DependencyNeverSatisfied")


@dataclass(frozen=True)
class View:
    """What a round is planned on.

    - nodes: node → (GPU type, GPUs the managed jobs may use)
    - jobs: managed jobs by id, in Slurm's order; `mapped` their key, throughputs and weight
    - fixed: running managed jobs that keep their GPUs whatever the round says
    - skipped: GPU jobs the adapter leaves alone, with the reason
    """

    nodes: dict[str, tuple[str, int]]
    jobs: dict[str, SlurmJob]
    mapped: dict[str, Mapped]
    fixed: frozenset[str]
    received: dict[str, dict[str, float]]
    skipped: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def gpu_types(self) -> list[str]:
        return sorted({kind for kind, _ in self.nodes.values()})

    def policy_snapshot(self) -> dict[str, Any]:
        """The snapshot the policy solves: every managed job on the managed GPUs."""
        return self._snapshot(self.jobs, self.nodes)

    def round_snapshot(self) -> dict[str, Any]:
        """The snapshot the round is computed on: without fixed jobs and the GPUs they hold."""
        nodes = dict(self.nodes)
        for job_id in self.fixed:
            for node, gpus in self.jobs[job_id].placement.items():
                kind, free = nodes[node]
                nodes[node] = (kind, free - gpus)
        jobs = {j: job for j, job in self.jobs.items() if j not in self.fixed}
        return self._snapshot(jobs, nodes)

    def previous(self) -> dict[str, dict[str, int]]:
        """Where the round's running jobs run now (node → GPUs)."""
        return {
            j: dict(job.placement)
            for j, job in self.jobs.items()
            if job.running and j not in self.fixed
        }

    def round_received(self) -> dict[str, dict[str, float]]:
        """Seconds received per type by the round's jobs (on the cluster's types)."""
        types = set(self.gpu_types)
        return {
            j: {k: s for k, s in self.received.get(j, {}).items() if k in types}
            for j in self.jobs
            if j not in self.fixed
        }

    def _snapshot(
        self, jobs: Mapping[str, SlurmJob], nodes: Mapping[str, tuple[str, int]]
    ) -> dict[str, Any]:
        return {
            "nodes": [
                {"id": name, "gpus": free, "gpu_type": kind}
                for name, (kind, free) in nodes.items()
                if free > 0
            ],
            "jobs": [
                {
                    "id": j,
                    "scale_factor": job.gpus,
                    "weight": self.mapped[j].weight,
                    "throughput": self.mapped[j].throughput,
                    "workload_class": self.mapped[j].key,
                }
                for j, job in jobs.items()
            ],
        }


def build_view(
    nodes: Iterable[SlurmNode],
    jobs: Iterable[SlurmJob],
    table: Mapping[str, Mapping[str, float]],
    received: Mapping[str, Mapping[str, float]],
    *,
    allow_preemption: bool,
) -> View:
    """Sort Slurm's jobs into managed, fixed and left alone, and the usable GPUs."""
    usable = {n.name: n for n in nodes if n.usable and n.gpu_type and n.gpus > 0}
    types = {n.gpu_type for n in usable.values() if n.gpu_type}
    columns = {key: {k: v for k, v in row.items() if k in types} for key, row in table.items()}
    free = {name: n.gpus for name, n in usable.items()}
    managed: dict[str, SlurmJob] = {}
    mapped: dict[str, Mapped] = {}
    skipped: dict[str, str] = {}
    for job in jobs:
        outcome = _why_not_managed(job, usable, types) or map_job(job, columns)
        if isinstance(outcome, Mapped):
            managed[job.id], mapped[job.id] = job, outcome
            continue
        if job.gpus > 0 and (job.running or job.pending):
            skipped[job.id] = outcome if isinstance(outcome, str) else outcome.reason
        for node, gpus in job.placement.items():  # held GPUs the managed jobs cannot have
            if node in free and job.holds_gpus:
                free[node] = max(0, free[node] - gpus)
    fixed = frozenset(
        j for j, job in managed.items() if job.running and not (allow_preemption and job.requeue)
    )
    return View(
        nodes={name: (str(usable[name].gpu_type), gpus) for name, gpus in free.items()},
        jobs=managed,
        mapped=mapped,
        fixed=fixed,
        received={j: dict(received.get(j, {})) for j in managed},
        skipped=skipped,
        warnings=[f"job {j}: {why}; left alone" for j, why in skipped.items()],
    )


def _why_not_managed(job: SlurmJob, usable: Mapping[str, SlurmNode], types: set[str]) -> str | None:
    """None when the adapter may schedule the job; else why it leaves it alone."""
    if job.gpus <= 0:
        return "asks for no GPU"
    if not (job.running or job.pending):
        return f"is {job.state}"
    if job.pending and job.reason in _NOT_STARTABLE:
        return f"cannot start yet ({job.reason})"
    if job.running and (not job.placement or any(n not in usable for n in job.placement)):
        return "runs on nodes the adapter does not schedule"
    if job.features and job.features not in types:
        return f"its constraint {job.features!r} is not one GPU type (the adapter steers it)"
    return None
