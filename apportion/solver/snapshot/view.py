"""The snapshot as the checks and the formulations' helpers read it.

A protocol rather than the `Snapshot` class, so the checks (which `Snapshot` runs while it
validates) need not import the class that imports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from apportion.solver.snapshot.contention import ContentionTable
from apportion.solver.snapshot.jobs import GpuType, Job
from apportion.solver.snapshot.nodes import DEFAULT_GPU_TYPE, Node
from apportion.solver.snapshot.sharing import Entity, JobPair


class SnapshotView(Protocol):
    @property
    def gpu_types(self) -> Sequence[GpuType]: ...
    @property
    def jobs(self) -> Sequence[Job]: ...
    @property
    def nodes(self) -> Sequence[Node] | None: ...
    @property
    def lease_seconds(self) -> float | None: ...
    @property
    def now(self) -> float | None: ...
    @property
    def lease_start(self) -> float | None: ...
    @property
    def entities(self) -> Sequence[Entity] | None: ...
    @property
    def job_pairs(self) -> Sequence[JobPair] | None: ...
    @property
    def contention(self) -> ContentionTable | None: ...


def node_type(snapshot: SnapshotView, node: Node) -> str:
    """The GPU type a node belongs to (an untyped node belongs to the cluster's only type)."""
    if node.gpu_type is not None:
        return node.gpu_type
    return snapshot.gpu_types[0].name if snapshot.gpu_types else DEFAULT_GPU_TYPE
