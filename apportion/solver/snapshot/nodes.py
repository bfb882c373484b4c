"""Nodes and running placements: the physical view of the cluster, for placement policies.

A snapshot may list its nodes (`id`, `gpus`, optionally `gpu_type`). Jobs that already run say
where in `placement` ({node id: GPUs}); jobs without one are waiting. When nodes are given the
GPU-type counts must agree with them, and may be left out altogether: they are then derived from
the nodes (untyped nodes form one type called `gpu`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from apportion.solver.snapshot.types import Name, PositiveCount

#: The GPU type of untyped nodes when the snapshot gives no `gpu_types`.
DEFAULT_GPU_TYPE = "gpu"


class Node(BaseModel):
    """A machine: its GPUs share one network interface (and, here, one GPU type)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: Name = Field(description="Unique node identifier; placements are keyed by it.")
    gpus: PositiveCount = Field(description="GPUs on the node.")
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
            if isinstance(node, dict) and _is_count(node.get("gpus")):
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
        and all(_is_count(v) for v in placement.values())
    )


def _is_count(value: Any) -> bool:
    # What validation will accept as a count: derived fields must not sum booleans or strings.
    return isinstance(value, int) and not isinstance(value, bool)
