"""Nodes and running placements: the physical view of the cluster, for placement policies.

A snapshot may list its nodes (`id`, `gpus`, optionally `gpu_type`). Jobs that already run say
where in `placement` ({node id: GPUs}); jobs without one are waiting. When nodes are given the
GPU-type counts must agree with them, and may be left out altogether: they are then derived from
the nodes (untyped nodes form one type called `gpu`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from solver.errors import FieldError
from solver.schema_types import Name

if TYPE_CHECKING:
    from solver.snapshot import Snapshot


#: The GPU type of untyped nodes when the snapshot gives no `gpu_types`.
DEFAULT_GPU_TYPE = "gpu"


class Node(BaseModel):
    """A machine: its GPUs share one network interface (and, here, one GPU type)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Name = Field(description="Unique node identifier; placements are keyed by it.")
    gpus: int = Field(ge=1, description="GPUs on the node.")
    gpu_type: Name | None = Field(
        default=None,
        description="GPU type of the node; may be left out when the cluster has one type.",
    )


def fill_derived_fields(data: Any) -> Any:
    """Before validation: derive `gpu_types` from `nodes` and running jobs' scale factors.

    Only fills what is absent, so explicit values are still checked against the nodes.
    """
    if not isinstance(data, dict):
        return data
    nodes = data.get("nodes")
    if isinstance(nodes, list) and "gpu_types" not in data:
        counts: dict[str, int] = defaultdict(int)
        for node in nodes:
            if isinstance(node, dict) and isinstance(node.get("gpus"), int):
                counts[node.get("gpu_type") or DEFAULT_GPU_TYPE] += node["gpus"]
        data = {**data, "gpu_types": [{"name": n, "count": c} for n, c in counts.items()]}
        if len(counts) > 1:  # untyped nodes next to typed ones form the type `gpu`
            data["nodes"] = [
                {**n, "gpu_type": DEFAULT_GPU_TYPE}
                if isinstance(n, dict) and n.get("gpu_type") is None
                else n
                for n in nodes
            ]
    jobs = data.get("jobs")
    # Placements need nodes; without them there is nothing to derive (and no per-job scan).
    if isinstance(nodes, list) and isinstance(jobs, list) and any(_infer_scale(j) for j in jobs):
        # A running job's gang is what it holds: its scale factor defaults to its placement.
        data = {
            **data,
            "jobs": [
                {**job, "scale_factor": sum(job["placement"].values())}
                if _infer_scale(job)
                else job
                for job in jobs
            ],
        }
    return data


def _infer_scale(job: Any) -> bool:
    if not isinstance(job, dict) or "scale_factor" in job:
        return False
    placement = job.get("placement")
    return (
        isinstance(placement, dict)
        and bool(placement)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in placement.values())
    )


def node_type(snapshot: Snapshot, node: Node) -> str:
    """The GPU type a node belongs to (an untyped node belongs to the cluster's only type)."""
    if node.gpu_type is not None:
        return node.gpu_type
    return snapshot.gpu_types[0].name if snapshot.gpu_types else DEFAULT_GPU_TYPE


def node_errors(snapshot: Snapshot) -> list[FieldError]:
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


def _node_list_errors(snapshot: Snapshot) -> list[FieldError]:
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


def _placement_errors(snapshot: Snapshot) -> list[FieldError]:
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
