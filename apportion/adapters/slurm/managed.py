"""From Slurm's view to what the shared controller schedules (`framework.Managed`).

GPUs come from the usable nodes in scope with typed GPUs (`sinfo`): each offers its GPUs minus
those held by jobs the adapter does not manage (out of scope, non-GPU work aside, a running job
without a throughput row, a job still completing). A job in scope is managed when it asks for
GPUs, is pending or running, has a throughput row (`mapping`), its `--constraint` is empty or
one GPU type (the adapter steers the type through that constraint, so it will not overwrite
anything richer), and its partitions hold every node the adapter schedules (the round may place
it on any of them). Its scale factor is its GPU count; a running job's GPUs are its placement.
A running job Slurm cannot requeue (`--no-requeue`) is pinned: it keeps its GPUs. A running job
in scope that came up with fewer GPUs than it asked for (`gpu:k80:0`, seen after a slurmctld
restart) is managed whatever its nodes, with that fault: the round requeues it, and hands out
none of the GPUs it asked for on its nodes meanwhile. A job's hold
(`JobHeldUser`, `JobHeldAdmin`), pending or running, is passed on for the controller to tell
the adapter's holds from its users'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from apportion.adapters.framework.view import Job, Managed
from apportion.adapters.slurm.mapping import Mapped, map_job
from apportion.adapters.slurm.scope import Scope
from apportion.adapters.slurm.slurmcli import SlurmJob, SlurmNode

#: Pending reasons under which a released job still could not start: they are left alone.
_NOT_STARTABLE = ("Dependency", "DependencyNeverSatisfied")


def build_managed(
    nodes: Iterable[SlurmNode],
    jobs: Iterable[SlurmJob],
    table: Mapping[str, Mapping[str, float]],
    scope: Scope | None = None,
) -> Managed[SlurmJob]:
    """Sort Slurm's jobs into managed and left alone, and count the GPUs a round may use."""
    scope = scope or Scope()
    nodes = list(nodes)
    usable = {
        n.name: n for n in nodes if n.usable and n.gpu_type and n.gpus > 0 and scope.schedules(n)
    }
    types = {n.gpu_type for n in usable.values() if n.gpu_type}
    columns = {key: {k: v for k, v in row.items() if k in types} for key, row in table.items()}
    members = _partition_members(nodes)
    free = {name: n.gpus for name, n in usable.items()}
    managed: list[Job[SlurmJob]] = []
    skipped: dict[str, str] = {}
    for job in jobs:
        outcome = (
            None
            if not scope.covers(job)
            else _faulty(job, columns)
            or _why_not_managed(job, usable, types, members)
            or map_job(job, columns)
        )
        if isinstance(outcome, Job):
            managed.append(outcome)
            continue
        if isinstance(outcome, Mapped):
            managed.append(_job(job, outcome))
            continue
        if outcome is not None and job.gpus > 0 and (job.running or job.pending):
            skipped[job.id] = outcome if isinstance(outcome, str) else outcome.reason
        for node, gpus in job.placement.items():  # held GPUs the managed jobs cannot have
            if node in free and job.holds_gpus:
                free[node] = max(0, free[node] - gpus)
    return Managed(
        nodes={name: (str(usable[name].gpu_type), gpus) for name, gpus in free.items()},
        jobs=managed,
        skipped=skipped,
    )


def _job(
    job: SlurmJob,
    mapped: Mapped,
    *,
    placement: dict[str, int] | None = None,
    fault: str | None = None,
) -> Job[SlurmJob]:
    """The round's job for a managed Slurm job: where it runs (if it does) and its fault."""
    running = job.running or fault is not None
    return Job(
        id=job.id,
        key=mapped.key,
        gpus=job.gpus,
        throughput=mapped.throughput,
        source=job,
        weight=mapped.weight,
        gpu_type=job.running_type if running else None,
        placement=placement if placement is not None else (dict(job.placement) if running else {}),
        pinned=None if job.requeue else "Slurm cannot requeue it (--no-requeue)",
        held_by=None if fault is not None else job.hold_reason,
        fault=fault,
    )


def _faulty(job: SlurmJob, table: Mapping[str, Mapping[str, float]]) -> Job[SlurmJob] | None:
    """A managed job running without its GPUs, with that fault (None for any other job)."""
    fault = job.without_gpus
    mapped = map_job(job, table) if fault is not None else None
    if not isinstance(mapped, Mapped):
        return None
    # Until its requeue completes, Slurm may still count the GPUs it asked for on its nodes:
    # the round hands none of them out.
    each = job.gpus // max(len(job.allocated), 1)
    placement = {node: max(job.placement.get(node, 0), each) for node in job.allocated}
    return _job(job, mapped, placement=placement, fault=fault)


def _partition_members(nodes: Iterable[SlurmNode]) -> dict[str, set[str]]:
    """Partition → its nodes."""
    members: dict[str, set[str]] = {}
    for node in nodes:
        for partition in node.partitions:
            members.setdefault(partition, set()).add(node.name)
    return members


def _why_not_managed(
    job: SlurmJob,
    usable: Mapping[str, SlurmNode],
    types: set[str],
    members: Mapping[str, set[str]],
) -> str | None:
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
    reachable = set().union(*(members.get(p, set()) for p in job.partitions))
    outside = sorted(set(usable) - reachable) if job.partitions and members else []
    if outside:
        partitions = ",".join(job.partitions)
        return (
            f"its partition {partitions} lacks node(s) {', '.join(outside[:4])} that the adapter "
            f"schedules; scope the adapter with --partition {job.partitions[0]}"
        )
    return None
