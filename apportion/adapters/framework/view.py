"""What a round is planned on, the same for every scheduler: the GPUs a round may hand out,
the jobs it schedules (with what each has received so far), and the snapshots the policy and
the round mechanism solve.

The integration says which GPUs and jobs are managed (`Managed`); `View.build` adds the shared
rule for running jobs: one that may not be preempted (preemption not allowed, or the job itself
cannot be, `Job.pinned`) is *fixed*: it keeps its GPUs, which the round does not hand out, and
only the other jobs are scheduled. The policy still sees every managed job.

Two kinds of managed job are taken out of the round altogether: a waiting job someone else
holds (its user, an admin: `held`, told from the adapter's own holds by the controller) stays
held and out of the policy's sight; a running job that came up without the GPUs it asked for
(`Job.fault`) is stopped back to the queue by the round, whatever it says, and nothing is
started on its nodes meanwhile (`actions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TextIO, TypeVar

J = TypeVar("J")


@dataclass(frozen=True)
class Job(Generic[J]):
    """A managed job.

    - key: its row of the throughput table (its workload class); `throughput` that row, cut to
      the types it may run on, in steps/s of the whole job at `gpus` GPUs (its scale factor)
    - gpu_type, placement: where it runs now (node → GPUs); None and empty while it waits
    - pinned: why it cannot be preempted (None when it can)
    - held_by: the scheduler's word for a hold on the job (Slurm's `JobHeldUser`), None when
      it has none; a running job may carry one too (its user held it while it ran)
    - fault: why it must be stopped now (it runs without the GPUs it asked for), or None
    - source: the integration's own record of the job
    """

    id: str
    key: str
    gpus: int
    throughput: dict[str, float]
    source: J
    weight: float = 1.0
    gpu_type: str | None = None
    placement: dict[str, int] = field(default_factory=dict)
    pinned: str | None = None
    held_by: str | None = None
    fault: str | None = None

    @property
    def running(self) -> bool:
        return bool(self.placement)

    def label(self) -> str:
        """`key, N GPUs`, for reasons and dry runs."""
        return f"{self.key}, {self.gpus} GPU{'s' if self.gpus != 1 else ''}"


@dataclass(frozen=True)
class Managed(Generic[J]):
    """What an integration manages in one state of its scheduler.

    - nodes: node → (GPU type, GPUs the managed jobs may use: those held by anything else
      already taken off)
    - jobs: the managed jobs, in the scheduler's order
    - skipped: GPU jobs left alone, with the reason (one line for the operator)
    """

    nodes: dict[str, tuple[str, int]]
    jobs: list[Job[J]]
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class View(Generic[J]):
    """A round's input: `Managed` plus the time each job received per GPU type and the running
    jobs that keep their GPUs whatever the round says (`fixed`); `held` the jobs someone else
    holds (job → why: waiting ones are outside the round; running ones, `held_running`, a
    round may keep or stop, never restart); `faulty` the running jobs the round stops for
    their fault."""

    nodes: dict[str, tuple[str, int]]
    jobs: dict[str, Job[J]]
    fixed: frozenset[str]
    received: dict[str, dict[str, float]]
    skipped: dict[str, str] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)
    faulty: dict[str, Job[J]] = field(default_factory=dict)
    held_running: frozenset[str] = frozenset()

    @classmethod
    def build(
        cls,
        managed: Managed[J],
        received: Mapping[str, Mapping[str, float]],
        *,
        allow_preemption: bool,
        held: Mapping[str, str] | None = None,
    ) -> View[J]:
        held = held or {}
        faulty = {job.id: job for job in managed.jobs if job.fault is not None}
        jobs = {
            job.id: job
            for job in managed.jobs
            if job.id not in faulty and not (job.id in held and not job.running)
        }
        fixed = frozenset(
            j
            for j, job in jobs.items()
            if job.running and (not allow_preemption or job.pinned is not None)
        )
        return cls(
            nodes=dict(managed.nodes),
            jobs=jobs,
            fixed=fixed,
            received={j: dict(received.get(j, {})) for j in jobs},
            skipped=dict(managed.skipped),
            held=dict(held),
            faulty=faulty,
            held_running=frozenset(j for j in held if j in jobs),
        )

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

    @staticmethod
    def _snapshot(
        jobs: Mapping[str, Job[J]], nodes: Mapping[str, tuple[str, int]]
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
                    "weight": job.weight,
                    "throughput": job.throughput,
                    "workload_class": job.key,
                }
                for j, job in jobs.items()
            ],
        }


def write_ledger(received: Mapping[str, Mapping[str, float]], out: TextIO) -> None:
    """The ledger's seconds per GPU type for each job, jobs in numeric order (try-out output)."""
    out.write("\nseconds received per GPU type (the adapter's ledger):\n")
    for job, per in sorted(received.items(), key=lambda item: int(item[0])):
        out.write(f"  job {job:<3} " + "  ".join(f"{k} {s:.1f}" for k, s in per.items()) + "\n")
