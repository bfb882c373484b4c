"""The node shapes a configuration may take on a GPU type with R GPUs per node (Sia): 1, 2, 4, …
GPUs on one node up to R, then whole nodes (2R, 3R, … up to the nodes there are). Powers of two
up to R divide R, so configurations in these shapes always pack onto the nodes when their GPUs
fit the type's count (`mechanism.elastic`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from apportion.solver.snapshot import Node
from apportion.solver.snapshot.view import SnapshotView, node_type


@dataclass(frozen=True)
class TypeNodes:
    """A GPU type's nodes: how many, and GPUs per node (the largest, if they differ)."""

    nodes: int
    gpus_per_node: int


def node_shapes(gpus_per_node: int, nodes: int) -> list[tuple[int, int]]:
    """(nodes, GPUs) of every shape: powers of two below R and R on one node, then whole
    nodes."""
    single = [1 << i for i in range(gpus_per_node.bit_length()) if (1 << i) < gpus_per_node]
    shapes = [(1, g) for g in [*single, gpus_per_node]]
    return shapes + [(n, n * gpus_per_node) for n in range(2, nodes + 1)]


def type_nodes(snapshot: SnapshotView) -> dict[str, TypeNodes]:
    """Per GPU type with nodes in the snapshot, its node count and GPUs per node."""
    per_type: dict[str, list[Node]] = defaultdict(list)
    for node in snapshot.nodes or ():
        per_type[node_type(snapshot, node)].append(node)
    return {k: TypeNodes(len(ns), max(n.gpus for n in ns)) for k, ns in per_type.items()}


def shapes_by_type(
    layout: dict[str, TypeNodes], names: Sequence[str]
) -> dict[str, list[tuple[int, int]]]:
    return {k: node_shapes(layout[k].gpus_per_node, layout[k].nodes) for k in names if k in layout}
