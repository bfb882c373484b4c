"""Nodes agree with the GPU-type counts; placements name known nodes and fit them."""

from __future__ import annotations

from collections import Counter, defaultdict

from apportion.solver.errors import FieldError
from apportion.solver.snapshot.view import SnapshotView, node_type


def node_errors(snapshot: SnapshotView) -> list[FieldError]:
    """Nodes agree with the GPU-type counts; placements name known nodes and fit them."""
    errors: list[FieldError] = []
    nodes = snapshot.nodes
    if nodes is None:
        for j, job in enumerate(snapshot.jobs):
            if job.placement is not None:
                errors.append(
                    FieldError(
                        ("jobs", j, "placement"),
                        "a placement needs the snapshot's `nodes`",
                        "missing_nodes",
                    )
                )
        return errors
    errors.extend(_node_list_errors(snapshot))
    errors.extend(_placement_errors(snapshot))
    return errors


def _node_list_errors(snapshot: SnapshotView) -> list[FieldError]:
    errors: list[FieldError] = []
    nodes = snapshot.nodes or []
    for node_id, n in Counter(node.id for node in nodes).items():
        if n > 1:
            errors.append(FieldError(("nodes",), f"duplicate node id {node_id!r}", "duplicate"))
    known = {g.name for g in snapshot.gpu_types}
    untyped_ok = len(snapshot.gpu_types) == 1
    per_type: dict[str, int] = defaultdict(int)
    for i, node in enumerate(nodes):
        if node.gpu_type is None and not untyped_ok:
            errors.append(
                FieldError(
                    ("nodes", i, "gpu_type"),
                    "the cluster has several GPU types: name this node's",
                    "missing_gpu_type",
                )
            )
        elif node.gpu_type is not None and node.gpu_type not in known:
            errors.append(
                FieldError(
                    ("nodes", i, "gpu_type"),
                    f"unknown GPU type {node.gpu_type!r}",
                    "unknown_gpu_type",
                )
            )
        else:
            per_type[node_type(snapshot, node)] += node.gpus
    for k, gpu in enumerate(snapshot.gpu_types):
        if per_type.get(gpu.name, 0) != gpu.count:
            errors.append(
                FieldError(
                    ("gpu_types", k, "count"),
                    f"the nodes hold {per_type.get(gpu.name, 0)} GPUs of type {gpu.name!r}, "
                    f"not {gpu.count}",
                    "count_mismatch",
                )
            )
    return errors


def _placement_errors(snapshot: SnapshotView) -> list[FieldError]:
    errors: list[FieldError] = []
    size = {node.id: node.gpus for node in snapshot.nodes or []}
    used: dict[str, int] = defaultdict(int)
    for j, job in enumerate(snapshot.jobs):
        if job.placement is None:
            continue
        loc = ("jobs", j, "placement")
        if not job.placement:
            errors.append(FieldError(loc, "a placement names at least one node", "empty"))
            continue
        for node_id, gpus in job.placement.items():
            if node_id not in size:
                errors.append(
                    FieldError((*loc, node_id), f"unknown node {node_id!r}", "unknown_node")
                )
                continue
            used[node_id] += gpus
            if used[node_id] > size[node_id]:
                errors.append(
                    FieldError(
                        (*loc, node_id),
                        f"node {node_id!r} has {size[node_id]} GPUs; running jobs place "
                        f"{used[node_id]} on it",
                        "over_capacity",
                    )
                )
        total = sum(job.placement.values())
        if total != job.scale_factor:
            errors.append(
                FieldError(
                    loc,
                    f"places {total} GPUs but the job's scale_factor is {job.scale_factor}",
                    "scale_mismatch",
                )
            )
    return errors
