"""The cluster snapshot, schema v1: one package, parts apart from the checks run across them.

`types` (field types) → parts (`jobs`, `deadlines`, `elastic`, `nodes`, `sharing`,
`contention`) → `view`
(what checks and helpers read) → `checks` → `columns` (plain jobs validated as columns, the fast
path) → `document` (`Snapshot`, `parse_snapshot`).
"""

from __future__ import annotations

from apportion.solver.snapshot.document import Snapshot, parse_snapshot
from apportion.solver.snapshot.jobs import GpuType, Job, job_class
from apportion.solver.snapshot.nodes import Node
from apportion.solver.snapshot.view import SnapshotView, node_type

__all__ = [
    "GpuType",
    "Job",
    "Node",
    "Snapshot",
    "SnapshotView",
    "job_class",
    "node_type",
    "parse_snapshot",
]
