"""A deadline snapshot as lease arrays (FORMULATIONS §6): slots, GPU sizes, leases, options.

Slot t is the lease [lease_start + tℓ, lease_start + (t+1)ℓ) on the caller's fixed grid
(`grid`). A job of demand g reserves RU(g) GPUs (rounded up to a size that packs consolidated),
needs L leases of work for its remaining estimate (`grid.count_work`: overhead per lease, the
safety margin, what a held lease still does), may be planned from its first slot on (1 when
the rest of the current lease is not worth a lease to it, past its hold when it holds GPUs), and
option v of it is met when all its leases lie in the first M = ⌊(deadline − lease_start)/ℓ⌋
slots. Everything the policy needs beyond pydantic objects is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from apportion.formulations.deadlines.grid import (
    ROUNDING,
    Holdings,
    count_work,
    level_capacity,
    read_holdings,
    size_ladder,
)
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.errors import FieldError, InputError
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.deadlines import JobClass
from apportion.solver.snapshot.jobs import job_class
from apportion.solver.snapshot.nodes import Node
from apportion.solver.snapshot.view import node_type

__all__ = ["ROUNDING", "LeaseProblem", "lease_problem", "round_up", "size_ladder"]


def round_up(gpus: IntArray, gpus_per_node: int) -> IntArray:
    """RU(g): the smallest ladder size ≥ g up to a node, whole nodes beyond (3→4, 5–7→8, 10→16).

    Every size divides the next and G, which is what makes first-fit-decreasing exact."""
    g = np.asarray(gpus, dtype=np.int64)
    ladder = size_ladder(gpus_per_node)
    small = ladder[np.searchsorted(ladder, np.minimum(g, gpus_per_node))]
    whole = gpus_per_node * -(-g // gpus_per_node)
    return np.where(g <= gpus_per_node, small, whole)


@dataclass(frozen=True, eq=False)
class LeaseProblem:
    """Jobs, their deadline options (rows) and the cluster, in lease units."""

    job_ids: list[str]
    node_ids: list[str]
    gpus_per_node: int
    gpu_column: int  # the nodes' GPU type, as a column of the allocation matrix
    lease: float
    now: float
    lease_start: float  # start of slot 0, the current lease (≤ now)
    horizon: int  # slots planned: 0 … horizon − 1
    demand: IntArray  # g_j
    reserve: IntArray  # RU(g_j)
    remaining: FloatArray  # E_j seconds (inf: unknown, best-effort only)
    overhead: FloatArray  # o_j: seconds lost in each lease the job (re)starts
    leases: IntArray  # L_j
    first_slot: IntArray  # the first slot j may be planned in
    done_by: FloatArray  # a holder that ends within its hold: when (NaN otherwise)
    holdings: Holdings
    kind: list[JobClass]
    guaranteed: BoolArray
    row_job: IntArray  # job of each deadline option row
    row_option: IntArray  # index of the option in the job's list
    row_time: FloatArray
    row_value: FloatArray
    row_slots_raw: IntArray  # M_i before the horizon cap (may be ≤ 0)
    row_kept: BoolArray  # not later than the option a guaranteed job was promised

    @property
    def capacity(self) -> int:
        return self.gpus_per_node * len(self.node_ids)

    @property
    def num_jobs(self) -> int:
        return int(self.demand.size)

    @cached_property
    def ladder(self) -> IntArray:
        return size_ladder(self.gpus_per_node)

    @cached_property
    def level_caps(self) -> IntArray:
        """(slot, chain size): the GPUs reservations of at least that size may take in the slot
        (`grid`); column 0 is the slot's plain capacity."""
        caps = np.full((self.horizon, self.ladder.size), self.capacity, dtype=np.int64)
        held = self.holdings.free[: self.horizon]
        caps[: len(held)] = level_capacity(held, self.ladder)
        return caps

    @cached_property
    def reserve_levels(self) -> BoolArray:
        """(job, chain size): the job's reservation counts at that level (r_j ≥ s)."""
        return self.reserve[:, None] >= self.ladder[None, :]

    @cached_property
    def row_slots(self) -> IntArray:
        """M_i capped at the horizon: a plan never reaches beyond it."""
        return np.clip(self.row_slots_raw, 0, self.horizon)

    @cached_property
    def row_feasible(self) -> BoolArray:
        """The option can be met on an otherwise empty cluster (holders stay where they are); a
        holder that ends within its hold meets exactly the deadlines from its end on; a
        guaranteed job only its promised option and earlier ones; a job larger than the
        cluster none."""
        job = self.row_job
        fits = self.row_slots - self.first_slot[job] >= self.leases[job]
        ends = np.isfinite(self.done_by[job])
        met = np.where(ends, self.row_time >= self.done_by[job], fits)
        return met & self.row_kept & self.fits_cluster[job]

    @cached_property
    def fits_cluster(self) -> BoolArray:
        """The job's demand is at most the cluster's GPUs: a larger one can never run here
        (it is answered, declined with that reason, not refused)."""
        fits: BoolArray = self.demand <= self.capacity
        return fits

    @cached_property
    def is_slo(self) -> BoolArray:
        return np.array([k is not JobClass.BEST_EFFORT for k in self.kind], dtype=bool)

    def rows_of(self, j: int) -> IntArray:
        return np.flatnonzero(self.row_job == j)


def lease_problem(
    snapshot: Snapshot,
    overhead: float,
    horizon_slots: int,
    throughput: FloatArray,
    margin: float | FloatArray = 0.0,
) -> LeaseProblem:
    """Read and check what the deadline policy needs; raises `InputError` naming the field."""
    nodes, column, gpus_per_node = _cluster(snapshot)
    lease = _lease(snapshot, overhead)
    now = snapshot.now or 0.0
    start = snapshot.lease_start if snapshot.lease_start is not None else now
    demand = np.array([job.scale_factor for job in snapshot.jobs], dtype=np.int64)
    kinds = [job_class(job) for job in snapshot.jobs]
    errors: list[FieldError] = []
    remaining = _remaining_time(snapshot, kinds, throughput[:, column], errors)
    per_job = _overheads(snapshot, overhead, lease, errors)
    if errors:
        raise InputError(errors)
    node_ids = [n.id for n in nodes]
    holdings = read_holdings(snapshot, node_ids, gpus_per_node, start, lease)
    guaranteed = np.array([job.guaranteed for job in snapshot.jobs], dtype=bool)
    work = count_work(remaining, per_job, margin, holdings, now, start, lease, guaranteed)
    row_job, row_option, row_time, row_value = _option_rows(snapshot)
    raw = np.floor((row_time - start) / lease + ROUNDING).astype(np.int64)
    # One more slot when the job's last lease, begun at the start of slot M, ends by d.
    last_start = np.maximum(start + raw * lease, now)
    ends = last_start + per_job[row_job] + work.tail[row_job] <= row_time + ROUNDING * lease
    raw += (ends & (raw >= 0)).astype(np.int64)
    return LeaseProblem(
        job_ids=[job.id for job in snapshot.jobs],
        node_ids=node_ids,
        gpus_per_node=gpus_per_node,
        gpu_column=column,
        lease=lease,
        now=now,
        lease_start=start,
        horizon=int(min(horizon_slots, max(1, int(raw.max(initial=1))))),
        demand=demand,
        reserve=round_up(demand, gpus_per_node),
        remaining=remaining,
        overhead=per_job,
        leases=work.leases,
        first_slot=work.first_slot,
        done_by=work.done_by,
        holdings=holdings,
        kind=kinds,
        guaranteed=guaranteed,
        row_job=row_job,
        row_option=row_option,
        row_time=row_time,
        row_value=row_value,
        row_slots_raw=raw,
        row_kept=_kept_rows(snapshot, row_job, row_time),
    )


def _overheads(
    snapshot: Snapshot, default: float, lease: float, errors: list[FieldError]
) -> FloatArray:
    """o_j: the job's own overhead, else the option's; each must leave some of a lease."""
    out = np.full(len(snapshot.jobs), default)
    for j, job in enumerate(snapshot.jobs):
        if job.overhead_seconds is None:
            continue
        out[j] = job.overhead_seconds
        if job.overhead_seconds >= lease:
            errors.append(
                FieldError(
                    ("snapshot", "jobs", j, "overhead_seconds"),
                    f"the per-lease overhead {job.overhead_seconds:g} s must be shorter than "
                    f"the lease {lease:g} s",
                    "too_large",
                )
            )
    return out


def _lease(snapshot: Snapshot, overhead: float) -> float:
    lease = snapshot.lease_seconds
    if lease is None:
        raise InputError.single(("snapshot", "lease_seconds"), "required by the deadline policy")
    if overhead >= lease:
        raise InputError.single(
            ("options", "overhead_seconds"),
            f"the per-lease overhead {overhead:g} s must be shorter than the lease {lease:g} s",
        )
    return lease


def _kept_rows(snapshot: Snapshot, row_job: IntArray, row_time: FloatArray) -> BoolArray:
    """Options a guaranteed job may still be given: its promised one and earlier ones."""
    promised = np.array(
        [
            job.guaranteed_deadline
            if job.guaranteed and job.guaranteed_deadline is not None
            else np.inf
            for job in snapshot.jobs
        ],
        dtype=float,
    )
    kept: BoolArray = row_time <= promised[row_job] + ROUNDING * np.maximum(1.0, row_time)
    return kept


def _option_rows(snapshot: Snapshot) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """One row per (job, deadline option): job, option index, deadline, value."""
    rows = [
        (j, v, o.time, o.value)
        for j, job in enumerate(snapshot.jobs)
        for v, o in enumerate(job.deadlines or [])
    ]
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return (
        np.array(columns[0], dtype=np.int64),
        np.array(columns[1], dtype=np.int64),
        np.array(columns[2], dtype=float),
        np.array(columns[3], dtype=float),
    )


def _cluster(snapshot: Snapshot) -> tuple[list[Node], int, int]:
    """Nodes, the column of their (single) GPU type, and G; homogeneous nodes are required."""
    nodes = snapshot.nodes
    if not nodes:
        raise InputError.single(("snapshot", "nodes"), "required by the deadline policy")
    types = {node_type(snapshot, n) for n in nodes}
    sizes = {n.gpus for n in nodes}
    if len(types) > 1 or len(sizes) > 1:
        raise InputError.single(
            ("snapshot", "nodes"),
            "the deadline policy needs homogeneous nodes (one GPU type, the same GPU count); "
            f"got types {sorted(map(str, types))} and sizes {sorted(sizes)}",
        )
    names = [g.name for g in snapshot.gpu_types]
    return list(nodes), names.index(str(types.pop())), sizes.pop()


def _remaining_time(
    snapshot: Snapshot, kinds: list[JobClass], throughput: FloatArray, errors: list[FieldError]
) -> FloatArray:
    """E_j: the estimate given, else steps remaining at the job's throughput on the nodes' type."""
    out = np.full(len(snapshot.jobs), np.inf)
    for j, job in enumerate(snapshot.jobs):
        if job.remaining_time is not None:
            out[j] = job.remaining_time
        elif job.steps_remaining is not None and throughput[j] > 0:
            out[j] = job.steps_remaining / throughput[j]
        elif kinds[j] is not JobClass.BEST_EFFORT:
            errors.append(
                FieldError(
                    ("snapshot", "jobs", j, "remaining_time"),
                    "an SLO job needs remaining_time, or steps_remaining with a positive "
                    "throughput on the nodes' GPU type",
                    "missing",
                )
            )
    return out
