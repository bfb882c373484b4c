"""Nodes of the cluster: the machines GPUs sit in, for policies that place jobs on them.

A node names its GPU type when the cluster has several; with a single GPU type it may leave it
out. When nodes are given they must account for every GPU: per type, the GPUs of its nodes equal
the type's `count`, so policies reading counts and policies reading nodes see the same cluster.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from solver.errors import FieldError

if TYPE_CHECKING:
    from solver.snapshot import Snapshot

NodeName = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]


class Node(BaseModel):
    """A machine with `gpus` GPUs of one type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: NodeName = Field(description="Unique node identifier; placements are keyed by it.")
    gpus: int = Field(ge=1, description="GPUs on this node.")
    gpu_type: NodeName | None = Field(
        default=None,
        description="GPU type of the node (a name from gpu_types); may be omitted when the "
        "cluster has a single GPU type.",
    )


def node_type(snapshot: Snapshot, node: Node) -> str | None:
    """The node's GPU type, defaulting to the cluster's only type."""
    if node.gpu_type is not None:
        return node.gpu_type
    return snapshot.gpu_types[0].name if len(snapshot.gpu_types) == 1 else None


def node_errors(snapshot: Snapshot) -> list[FieldError]:
    """Unique ids, known types, and node totals that match the GPU type counts."""
    if snapshot.nodes is None:
        return []
    errors: list[FieldError] = []
    for node_id, n in Counter(node.id for node in snapshot.nodes).items():
        if n > 1:
            errors.append(FieldError(("nodes",), f"duplicate node id {node_id!r}", "duplicate"))
    known = {g.name for g in snapshot.gpu_types}
    totals: Counter[str] = Counter()
    for i, node in enumerate(snapshot.nodes):
        kind = node_type(snapshot, node)
        if kind is None:
            errors.append(
                FieldError(
                    ("nodes", i, "gpu_type"),
                    "the cluster has several GPU types: name the node's type",
                    "missing",
                )
            )
        elif kind not in known:
            errors.append(
                FieldError(
                    ("nodes", i, "gpu_type"), f"unknown GPU type {kind!r}", "unknown_gpu_type"
                )
            )
        else:
            totals[kind] += node.gpus
    if errors:
        return errors
    for k, gpu in enumerate(snapshot.gpu_types):
        if totals[gpu.name] != gpu.count:
            errors.append(
                FieldError(
                    ("gpu_types", k, "count"),
                    f"the nodes hold {totals[gpu.name]} GPUs of type {gpu.name!r} but the count "
                    f"is {gpu.count}",
                    "node_total_mismatch",
                )
            )
    return errors
