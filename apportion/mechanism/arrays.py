"""A round's inputs as arrays: combinations (single jobs, then pairs) × GPU types.

Rows c < m are the snapshot's jobs in its order; rows m + i are `pairs[i]`. For each row,
`target[c, k]` is its time fraction on type k (X_jk, or the pair's Y_pk) and `got[c, k]` the
seconds it has received there *as that combination*: a pair's own together-time, and for a
single job its received time minus the time it spent in pairs on k (time alone).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from apportion.mechanism.types import PairShare
from apportion.solver.snapshot import Snapshot, node_type

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
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

    # Per-type views a round's placement starts from; computed once per cluster, as a
    # simulation places on the same nodes every round.
    @cached_property
    def members(self) -> tuple[tuple[int, ...], ...]:
        """Per type: its nodes (indices into node_ids), in snapshot order."""
        return tuple(
            tuple(np.flatnonzero(self.node_type == k).tolist()) for k in range(len(self.type_names))
        )

    @cached_property
    def where(self) -> dict[str, tuple[int, int]]:
        """Node id -> (its type, its place among that type's nodes)."""
        return {
            self.node_ids[n]: (k, local)
            for k, nodes in enumerate(self.members)
            for local, n in enumerate(nodes)
        }

    @cached_property
    def node_gpus_by_type(self) -> tuple[tuple[int, ...], ...]:
        gpus = self.node_gpus.tolist()
        return tuple(tuple(gpus[n] for n in nodes) for nodes in self.members)


@dataclass(frozen=True)
class Combos:
    """Jobs and pairs as rows; see the module docstring."""

    job_ids: tuple[str, ...]
    pairs: tuple[tuple[int, int], ...]  # member rows of each pair
    scale: IntArray  # per row: GPUs it occupies (a pair: its members' common scale factor)
    target: FloatArray  # rows × types
    got: FloatArray  # rows × types, seconds
    received_total: FloatArray  # per job: Σ_k received_jk (seconds)
    rows: tuple[tuple[int, ...], ...]  # per row: its member jobs
    # (rows, types) of the entries with time, and the jobs with time alone or in a pair
    # (`Targets` computes them once per allocation).
    entries: tuple[IntArray, IntArray]
    has_time: BoolArray

    @property
    def num_jobs(self) -> int:
        return len(self.job_ids)

    def members(self, row: int) -> tuple[int, ...]:
        return self.rows[row]


@dataclass(frozen=True)
class Targets:
    """What a round needs that stays the same until the snapshot or the allocation changes."""

    job_ids: tuple[str, ...]
    index: Mapping[str, int]  # job id -> row
    col: Mapping[str, int]  # GPU type -> column
    pairs: tuple[tuple[int, int], ...]
    scale: IntArray
    target: FloatArray
    rows: tuple[tuple[int, ...], ...]

    @cached_property
    def entries(self) -> tuple[IntArray, IntArray]:
        rows, types = np.nonzero(self.target > 0)
        return rows.astype(np.int64), types.astype(np.int64)

    @cached_property
    def has_time(self) -> BoolArray:
        """Per job: time allocated alone or in some pair."""
        m = len(self.job_ids)
        wants = self.target.sum(axis=1) > 0
        out: BoolArray = wants[:m].copy()
        for i, (a, b) in enumerate(self.pairs):
            if wants[m + i]:
                out[a] = out[b] = True
        return out


def targets(
    snapshot: Snapshot,
    types: Sequence[str],
    allocation: Mapping[str, Mapping[str, float]],
    pairs: Sequence[PairShare],
) -> Targets:
    """The rows' members, gang sizes and time fractions (inputs already checked)."""
    job_ids = tuple(job.id for job in snapshot.jobs)
    index = {job_id: j for j, job_id in enumerate(job_ids)}
    col = {name: k for k, name in enumerate(types)}
    m, n = len(job_ids), len(types)
    x = _matrix(allocation, index, col, m, n)
    y = np.zeros((len(pairs), n))
    members = tuple((index[pair.a], index[pair.b]) for pair in pairs)
    for i, pair in enumerate(pairs):
        for name, value in pair.allocation.items():
            y[i, col[name]] = value
    scale = np.array([job.scale_factor for job in snapshot.jobs], dtype=np.int64)
    pair_scale = scale[[a for a, _ in members]] if members else np.zeros(0, dtype=np.int64)
    return Targets(
        job_ids,
        index,
        col,
        members,
        np.concatenate([scale, pair_scale]),
        np.vstack([x, y]),
        tuple((j,) for j in range(m)) + members,
    )


def combos(
    fixed: Targets,
    received: Mapping[str, Mapping[str, float]] | FloatArray,
    pairs: Sequence[PairShare],
) -> Combos:
    """The rows of a round: `fixed` with the time received so far (by job id, or as a jobs ×
    types array in the snapshot's orders), `pairs` in the order `fixed` was built with, for
    their time together."""
    m, n = len(fixed.job_ids), len(fixed.col)
    if isinstance(received, np.ndarray):
        r = np.asarray(received, dtype=np.float64)  # read only: `alone` below is a copy
    else:
        r = _matrix(received, fixed.index, fixed.col, m, n)
    together = np.zeros((len(pairs), n))
    for i, pair in enumerate(pairs):
        for name, value in pair.received.items():
            together[i, fixed.col[name]] = value
    alone = r.copy()
    for i, (a, b) in enumerate(fixed.pairs):
        alone[a] -= together[i]
        alone[b] -= together[i]
    return Combos(
        fixed.job_ids,
        fixed.pairs,
        fixed.scale,
        fixed.target,
        # Round-off in the caller's bookkeeping must not make time alone negative.
        np.vstack([np.maximum(alone, 0.0), together]),
        r.sum(axis=1),
        fixed.rows,
        fixed.entries,
        fixed.has_time,
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
