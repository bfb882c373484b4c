"""A round's inputs as arrays: combinations (single jobs, then pairs) × GPU types.

Rows c < m are the snapshot's jobs in its order; rows m + i are `pairs[i]`. For each row,
`target[c, k]` is its time fraction on type k (X_jk, or the pair's Y_pk) and `got[c, k]` the
seconds it has received there *as that combination*: a pair's own together-time, and for a
single job its received time minus the time it spent in pairs on k (time alone).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mechanism.types import PairShare
from solver.snapshot import Snapshot, node_type

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Cluster:
    """The snapshot's nodes, grouped by GPU type (types in the snapshot's order)."""

    type_names: tuple[str, ...]
    node_ids: tuple[str, ...]
    node_gpus: IntArray  # per node
    node_type: IntArray  # per node: index into type_names
    capacity: IntArray  # per type: GPUs on its nodes

    @classmethod
    def of(cls, snapshot: Snapshot) -> Cluster:
        names = tuple(g.name for g in snapshot.gpu_types)
        index = {name: k for k, name in enumerate(names)}
        nodes = snapshot.nodes or []
        gpus = np.array([n.gpus for n in nodes], dtype=np.int64)
        types = np.array([index[node_type(snapshot, n)] for n in nodes], dtype=np.int64)
        capacity = np.bincount(types, weights=gpus, minlength=len(names)).astype(np.int64)
        return cls(names, tuple(n.id for n in nodes), gpus, types, capacity)


@dataclass(frozen=True)
class Combos:
    """Jobs and pairs as rows; see the module docstring."""

    job_ids: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]  # member rows of each pair
    scale: IntArray  # per row: GPUs it occupies (a pair: its members' common scale factor)
    target: FloatArray  # rows × types
    got: FloatArray  # rows × types, seconds
    received_total: FloatArray  # per job: Σ_k received_jk (seconds)

    @property
    def num_jobs(self) -> int:
        return len(self.job_ids)

    def members(self, row: int) -> tuple[int, ...]:
        return (row,) if row < self.num_jobs else self.pairs[row - self.num_jobs]


def combos(
    snapshot: Snapshot,
    types: Sequence[str],
    allocation: Mapping[str, Mapping[str, float]],
    received: Mapping[str, Mapping[str, float]],
    pairs: Sequence[PairShare],
) -> Combos:
    """The rows of a round (inputs already checked: known ids and types, sane numbers)."""
    job_ids = tuple(job.id for job in snapshot.jobs)
    rows = {job_id: j for j, job_id in enumerate(job_ids)}
    col = {name: k for k, name in enumerate(types)}
    m, p, n = len(job_ids), len(pairs), len(types)
    x = _matrix(allocation, rows, col, m, n)
    r = _matrix(received, rows, col, m, n)
    y, together = np.zeros((p, n)), np.zeros((p, n))
    members = []
    for i, pair in enumerate(pairs):
        members.append((rows[pair.a], rows[pair.b]))
        for name, value in pair.allocation.items():
            y[i, col[name]] = value
        for name, value in pair.received.items():
            together[i, col[name]] = value
    alone = r.copy()
    for i, (a, b) in enumerate(members):
        alone[a] -= together[i]
        alone[b] -= together[i]
    scale = np.array([job.scale_factor for job in snapshot.jobs], dtype=np.int64)
    pair_scale = scale[[a for a, _ in members]] if members else np.zeros(0, dtype=np.int64)
    return Combos(
        job_ids,
        tuple(members),
        np.concatenate([scale, pair_scale]),
        np.vstack([x, y]),
        # Round-off in the caller's bookkeeping must not make time alone negative.
        np.vstack([np.maximum(alone, 0.0), together]),
        r.sum(axis=1),
    )


def _matrix(
    values: Mapping[str, Mapping[str, float]],
    rows: Mapping[str, int],
    col: Mapping[str, int],
    m: int,
    n: int,
) -> FloatArray:
    out = np.zeros((m, n))
    for job_id, per_type in values.items():
        j = rows[job_id]
        for name, value in per_type.items():
            out[j, col[name]] = value
    return out
