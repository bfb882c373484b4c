"""From what Ray holds and the queue says to what the shared controller schedules
(`framework.Managed`).

GPUs come from the nodes in scope (`Scope.schedules`): each offers its GPUs minus those held
by placement groups that are not the adapter's (found on the node by `bundles_to_node_id`)
and by the adapter's groups of jobs it leaves alone. A job of the queue is managed when it is
queued or running and its key has a row in the throughput table with a GPU type of the
cluster; it runs where its placement group is (Ray's table, never the queue's own record). A
group whose node is out of scope leaves its job alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from apportion.adapters.framework.table import keys_text
from apportion.adapters.framework.view import Job, Managed
from apportion.adapters.ray.queue import QueuedJob
from apportion.adapters.ray.raycluster import Group, RayNode
from apportion.adapters.ray.scope import Scope


@dataclass(frozen=True)
class RayState:
    """One reading: Ray's nodes and live groups, the queue's active jobs, each running job's
    group (job id → group), and jobs to leave alone this round with the reason."""

    nodes: list[RayNode]
    groups: list[Group]
    jobs: list[QueuedJob]
    running: dict[str, Group] = field(default_factory=dict)
    held_back: dict[str, str] = field(default_factory=dict)


def build_managed(
    state: RayState, table: Mapping[str, Mapping[str, float]], scope: Scope
) -> Managed[QueuedJob]:
    """Sort the queue's jobs into managed and left alone, and count the GPUs a round may use."""
    usable = {n.node_id: n for n in state.nodes if scope.schedules(n)}
    names = {n.name: n for n in usable.values() if n.name is not None}
    types = {str(n.gpu_type) for n in usable.values()}
    free = {n.name: n.gpus for n in usable.values() if n.name is not None}
    ours = {group.id for group in state.running.values()}
    for other in state.groups:  # GPUs held by anything else
        if other.id not in ours:
            for node_id, gpus in other.by_node_id.items():
                name = usable[node_id].name if node_id in usable else None
                if name is not None:
                    free[name] = max(0, free[name] - gpus)
    jobs: list[Job[QueuedJob]] = []
    skipped: dict[str, str] = {}
    for job in state.jobs:
        group = state.running.get(job.id)
        why = state.held_back.get(job.id) or _why_not(job, group, table, types, names)
        if why is None:
            jobs.append(_job(job, group, table, types))
            continue
        skipped[job.id] = why
        for where, gpus in (group.placement if group else {}).items():
            if where in free:
                free[where] = max(0, free[where] - gpus)
    nodes = {name: (str(names[name].gpu_type), gpus) for name, gpus in free.items()}
    return Managed(nodes=nodes, jobs=jobs, skipped=skipped)


def _why_not(
    job: QueuedJob,
    group: Group | None,
    table: Mapping[str, Mapping[str, float]],
    types: set[str],
    names: Mapping[str, RayNode],
) -> str | None:
    if job.key not in table:
        return f"no throughput row for {job.key!r}; rows: {keys_text(table)}"
    if not any(kind in types for kind in table[job.key]):
        return f"its row {job.key!r} has no GPU type the adapter schedules ({sorted(types)})"
    if group is not None:
        outside = [n for n in group.placement if n not in names]
        if outside or group.gpu_type not in types:
            return f"runs on nodes the adapter does not schedule ({', '.join(outside)})"
    return None


def _job(
    job: QueuedJob, group: Group | None, table: Mapping[str, Mapping[str, float]], types: set[str]
) -> Job[QueuedJob]:
    return Job(
        id=job.id,
        key=job.key,
        gpus=job.gpus,
        throughput={k: v for k, v in table[job.key].items() if k in types},
        source=job,
        weight=job.weight,
        gpu_type=group.gpu_type if group else None,
        placement=dict(group.placement) if group else {},
    )
