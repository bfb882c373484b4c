"""A round's inputs as arrays: combinations (single jobs, then pairs) × GPU types.

Rows c < m are the snapshot's jobs in its order; rows m + i are `pairs[i]`. For each row,
`target[c, k]` is its time fraction on type k (X_jk, or the pair's Y_pk) and `got[c, k]` the
seconds it has received there *as that combination*: a pair's own together-time, and for a
single job its received time minus the time it spent in pairs on k (time alone).

A fraction on a type where the row makes no progress is no target: a job's throughput there is
0 or missing in the snapshot, or a pair's (either member's, as the snapshot's `job_pairs` lists
it; for a pair it does not list, either member's alone). An allocation may hold such time (Gavel's
agnostic baseline counts it as a share), but running it would only hold GPUs; Gavel's mechanism
gives those entries priority 0 and skips them, and so does this one (`Targets.stalled` says which
jobs lost all their time that way).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property

import numpy as np

from apportion.mechanism.types import PairShare
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.result.table import JobTable
from apportion.solver.snapshot import Snapshot, node_type
from apportion.solver.snapshot.columns import JobColumns

#: Time fractions below this are a solver's round-off, not time to serve (a 1e-9 share of a
#: day is 86 µs; served at +∞ priority it would cost a whole round).
NEGLIGIBLE = 1e-9
#: An allocation X: job → GPU type → fraction, or a result's per-job columns as they are (a
#: `JobTable`: rows of jobs the snapshot does not list are not in the round).
Allocation = Mapping[str, Mapping[str, float]] | JobTable


class Spare(StrEnum):
    """Which entries without time a `types` round serves at priority 0 (`Targets.spare`)."""

    UP = "up"  # a job moving up, or one whose time is all where it makes no progress
    ANY = "any"  # Gavel's simulator: a job the allocation covers, on any type where it runs
    NONE = "none"  # Gavel's simulator under a FIFO policy: none


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
    def served(self) -> tuple[BoolArray | None, IntArray]:  # types with GPUs (None: all)
        has = self.capacity > 0
        return (None, self.capacity) if has.all() else (has, self.capacity[has])

    @cached_property
    def node_ids_by_type(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(self.node_ids[n] for n in nodes) for nodes in self.members)

    @cached_property
    def node_gpus_by_type(self) -> tuple[tuple[int, ...], ...]:
        gpus = self.node_gpus.tolist()
        return tuple(tuple(gpus[n] for n in nodes) for nodes in self.members)


@dataclass(slots=True)  # made every round: not frozen, whose guard costs per field
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
    stalled: Mapping[int, tuple[int, ...]]  # see `Targets.stalled`
    speed: FloatArray  # see `Targets.speed`
    type_rank: IntArray  # see `Targets.type_rank`
    queues: tuple[IntArray, IntArray, tuple[BoolArray, IntArray, IntArray]]  # `Targets.queues`
    scale_list: list[int]  # `scale` as Python ints, for the loops over a round's rows

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
    # Per job, the types it was given time on where it makes no progress, when that was all of
    # its time (it then does not run at all).
    stalled: Mapping[int, tuple[int, ...]]
    speed: FloatArray  # jobs × types: the snapshot's throughputs (0 where it cannot run)
    spare_rule: Spare = Spare.UP
    uncovered: frozenset[int] = frozenset()  # jobs the allocation was not computed for

    @cached_property
    def entries(self) -> tuple[IntArray, IntArray]:
        rows, types = np.nonzero(self.target > 0)
        return rows.astype(np.int64, copy=False), types.astype(np.int64, copy=False)

    @cached_property
    def type_rank(self) -> IntArray:
        """Per type, its place when types are served fastest first (0 = fastest): by the mean,
        over the jobs that run on it, of the job's speed there relative to its fastest type;
        ties in snapshot order. (Gavel serves V100, P100, K80, in that order.)"""
        best = self.speed.max(axis=1, initial=0.0)
        runs = self.speed > 0
        relative = np.where(runs, self.speed / np.where(best > 0, best, 1.0)[:, None], 0.0)
        count = runs.sum(axis=0)
        mean = relative.sum(axis=0) / np.maximum(count, 1)
        rank = np.empty(mean.size, dtype=np.int64)
        rank[np.argsort(-mean, kind="stable")] = np.arange(mean.size)
        return rank

    @cached_property
    def spare(self) -> tuple[IntArray, IntArray]:
        """(job, type) entries without time that a `types` round may serve at priority 0: a job
        with time on a type where it runs at least as fast as on its slowest type with time (it
        moves up to a GPU no entry with time took), and a job whose time was all where it makes
        no progress (`stalled`) wherever it does. A job the allocation gave nothing does not
        run: the policy decided so.

        Gavel's simulator (`Spare.ANY`) serves instead every job its allocation covers on
        every type where it has no time and makes progress (its allocation's jobs all have
        entries of priority 0 in every type's queue), and none under its FIFO policies
        (`Spare.NONE`); a job that arrived since the allocation runs nowhere."""
        m = len(self.job_ids)
        speed, target = self.speed, self.target[:m]
        if self.spare_rule is not Spare.UP:
            wanted = (speed > 0) & (target <= 0) & (self.spare_rule is Spare.ANY)
            wanted[list(self.uncovered)] = False
            rows, types = np.nonzero(wanted)
            return rows.astype(np.int64, copy=False), types.astype(np.int64, copy=False)
        given = np.where(target > 0, speed, np.inf).min(axis=1)  # its slowest type with time
        has = target.sum(axis=1) > 0
        wanted = (speed > 0) & (target <= 0)
        up = has[:, None] & (speed >= given[:, None])
        if self.stalled:
            stalled = np.zeros(m, dtype=bool)
            stalled[list(self.stalled)] = True
            up |= stalled[:, None]
        wanted &= up
        rows, types = np.nonzero(wanted)
        return rows.astype(np.int64, copy=False), types.astype(np.int64, copy=False)

    @cached_property
    def queues(self) -> tuple[IntArray, IntArray, tuple[BoolArray, IntArray, IntArray]]:
        """A `types` round's entries (those with time, then `spare`) as (rows, types), sorted
        by the keys that do not change between rounds, A_ck descending then row (a round's
        stable sort keeps that among equals); whether each is a priority-0 entry (A_ck = 0),
        its group (type's rank, then priority-0 last), its flat place in rows × types."""
        rows = np.concatenate([self.entries[0], self.spare[0]])
        types = np.concatenate([self.entries[1], self.spare[1]])
        target = self.target[rows, types]
        first = np.lexsort((rows, -target))
        rows, types, target = rows[first], types[first], target[first]
        spare = target <= 0
        flat = rows * self.target.shape[1] + types  # positions in a C-ordered rows × types array
        return rows, types, (spare, self.type_rank[types] * 2 + spare, flat)

    @cached_property
    def scale_list(self) -> list[int]:
        return self.scale.tolist()  # type: ignore[no-any-return]

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
    allocation: Allocation,
    pairs: Sequence[PairShare],
    spare: Spare = Spare.UP,
    uncovered: Sequence[str] = (),
) -> Targets:
    """The rows' members, gang sizes and time fractions (inputs already checked); fractions
    below `NEGLIGIBLE` count as 0. `spare` and `uncovered` (job ids): see `Targets.spare`."""
    job_ids, gpu_names, throughput, scale_factor = _job_arrays(snapshot)
    m, n = len(job_ids), len(types)
    index = dict(zip(job_ids, range(m), strict=True))
    col = dict(zip(types, range(n), strict=True))
    if isinstance(allocation, JobTable):
        given = _columns(allocation, index, col, m, n)
    else:
        given = _matrix(allocation, index, col, m, n)
    given = np.where(given >= NEGLIGIBLE, given, 0.0)
    speed = np.zeros((m, n))
    speed[:, [col[name] for name in gpu_names]] = throughput
    x = np.where(speed > 0, given, 0.0)
    scale = scale_factor.astype(np.int64)
    members = tuple((index[pair.a], index[pair.b]) for pair in pairs)
    target, sizes = x, scale
    y = np.zeros((len(pairs), n))
    if pairs:
        for i, pair in enumerate(pairs):
            for name, value in pair.allocation.items():
                y[i, col[name]] = value
        y = np.where(_pair_progress(snapshot, members, speed, index, col, job_ids), y, 0.0)
        target = np.vstack([x, y])
        sizes = np.concatenate([scale, scale[[a for a, _ in members]]])
    return Targets(
        job_ids,
        index,
        col,
        members,
        sizes,
        target,
        tuple(zip(range(m))) + members,
        _stalled(given, x, y, members),
        speed,
        spare,
        frozenset(index[j] for j in uncovered if j in index),
    )


def _job_arrays(snapshot: Snapshot) -> tuple[tuple[str, ...], list[str], FloatArray, FloatArray]:
    """Job ids, GPU type names, throughputs (jobs × types) and gang sizes: of a snapshot
    validated as columns without building a `Job` per job (read only: `targets` copies)."""
    jobs = snapshot.jobs
    names = [g.name for g in snapshot.gpu_types]
    if isinstance(jobs, JobColumns) and jobs.gpu_names == names:
        return tuple(jobs.ids), names, jobs.throughput, jobs.scale_factor
    arrays = ClusterArrays.from_snapshot(snapshot)
    return tuple(arrays.job_ids), arrays.gpu_names, arrays.throughput, arrays.scale_factor


def _pair_progress(
    snapshot: Snapshot,
    members: tuple[tuple[int, int], ...],
    speed: FloatArray,
    index: Mapping[str, int],
    col: Mapping[str, int],
    ids: Sequence[str],
) -> BoolArray:
    """Per pair and type: both members progress there together (see the module docstring)."""
    if not members:
        return np.zeros((0, speed.shape[1]), dtype=bool)
    a, b = (np.array(side, dtype=np.int64) for side in zip(*members, strict=True))
    out: BoolArray = (speed[a] > 0) & (speed[b] > 0)
    listed = {
        frozenset((p.a, p.b)): p for p in snapshot.job_pairs or [] if p.a in index and p.b in index
    }
    for i, (ja, jb) in enumerate(members):
        pair = listed.get(frozenset((ids[ja], ids[jb])))
        if pair is not None:
            out[i] = False
            for name, rates in pair.throughput.items():
                if name in col:
                    out[i, col[name]] = min(rates) > 0
    return out


def _stalled(
    given: FloatArray, x: FloatArray, y: FloatArray, members: tuple[tuple[int, int], ...]
) -> dict[int, tuple[int, ...]]:
    """Jobs whose only time was on types where they make no progress, with those types."""
    lost = (given > 0) & (x <= 0)
    if not lost.any():  # the usual allocation: all of it where the jobs progress
        return {}
    keeps = x.sum(axis=1) > 0
    for i, (a, b) in enumerate(members):
        if y[i].sum() > 0:
            keeps[a] = keeps[b] = True
    return {
        int(j): tuple(np.flatnonzero(lost[j]).tolist())
        for j in np.flatnonzero(~keeps & lost.any(axis=1))
    }


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
    # Round-off in the caller's bookkeeping must not make time alone negative.
    got = np.maximum(r, 0.0)
    if pairs or fixed.pairs:
        together = np.zeros((len(pairs), n))
        for i, pair in enumerate(pairs):
            for name, value in pair.received.items():
                together[i, fixed.col[name]] = value
        alone = r.copy()
        for i, (a, b) in enumerate(fixed.pairs):
            alone[a] -= together[i]
            alone[b] -= together[i]
        got = np.vstack([np.maximum(alone, 0.0), together])
    return Combos(
        fixed.job_ids,
        fixed.pairs,
        fixed.scale,
        fixed.target,
        got,
        r.sum(axis=1),
        fixed.rows,
        fixed.entries,
        fixed.has_time,
        fixed.stalled,
        fixed.speed,
        fixed.type_rank,
        fixed.queues,
        fixed.scale_list,
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


def _columns(
    table: JobTable, rows: Mapping[str, int], col: Mapping[str, int], m: int, n: int
) -> FloatArray:
    """A result's allocation columns in the snapshot's job and type orders."""
    if list(table.ids) == list(rows) and list(table.gpu_names) == list(col):
        return np.array(table.allocation, dtype=float)
    r = np.fromiter((rows.get(i, -1) for i in table.ids), np.int64, len(table.ids))
    c = np.fromiter((col.get(k, -1) for k in table.gpu_names), np.int64, len(table.gpu_names))
    keep_r, keep_c = np.flatnonzero(r >= 0), np.flatnonzero(c >= 0)
    out = np.zeros((m, n))
    out[np.ix_(r[keep_r], c[keep_c])] = table.allocation[np.ix_(keep_r, keep_c)]
    return out
