"""A deadline snapshot as lease arrays (FORMULATIONS §6): slots, GPU sizes, leases, options.

Slot t is the lease [now + tℓ, now + (t+1)ℓ). A job of demand g reserves RU(g) GPUs (rounded up
to a size that packs consolidated), needs L = ⌈E / (ℓ − overhead)⌉ leases for E seconds of
remaining work, and option v of it is met when all its leases lie in the first
M = ⌊(deadline − now)/ℓ⌋ slots. Everything the policy needs beyond pydantic objects is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from solver.errors import FieldError, InputError
from solver.snapshot import Snapshot
from solver.snapshot.deadlines import JobClass
from solver.snapshot.jobs import job_class
from solver.snapshot.nodes import Node
from solver.snapshot.view import node_type

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Slack on ⌈E/ℓ⌉ and ⌊(d − now)/ℓ⌋ so that 3600 s / 1200 s is 3 leases, not 4.
ROUNDING = 1e-9


def size_ladder(gpus_per_node: int) -> IntArray:
    """Sizes below a node that pack consolidated: powers of two dividing G, then G itself."""
    sizes = [1]
    while gpus_per_node % (sizes[-1] * 2) == 0:
        sizes.append(sizes[-1] * 2)
    if sizes[-1] != gpus_per_node:
        sizes.append(gpus_per_node)
    return np.array(sizes, dtype=np.int64)


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
    horizon: int  # slots planned: 0 … horizon − 1
    demand: IntArray  # g_j
    reserve: IntArray  # RU(g_j)
    remaining: FloatArray  # E_j seconds (inf: unknown, best-effort only)
    leases: IntArray  # L_j
    kind: list[JobClass]
    guaranteed: BoolArray
    row_job: IntArray  # job of each deadline option row
    row_option: IntArray  # index of the option in the job's list
    row_time: FloatArray
    row_value: FloatArray
    row_slots_raw: IntArray  # M_i before the horizon cap (may be ≤ 0)

    @property
    def capacity(self) -> int:
        return self.gpus_per_node * len(self.node_ids)

    @property
    def num_jobs(self) -> int:
        return int(self.demand.size)

    @cached_property
    def row_slots(self) -> IntArray:
        """M_i capped at the horizon: a plan never reaches beyond it."""
        return np.clip(self.row_slots_raw, 0, self.horizon)

    @cached_property
    def row_feasible(self) -> BoolArray:
        """The option can be met on an otherwise empty cluster."""
        return self.row_slots >= self.leases[self.row_job]

    @cached_property
    def is_slo(self) -> BoolArray:
        return np.array([k is not JobClass.BEST_EFFORT for k in self.kind], dtype=bool)

    def rows_of(self, j: int) -> IntArray:
        return np.flatnonzero(self.row_job == j)


def lease_problem(
    snapshot: Snapshot, overhead: float, horizon_slots: int, throughput: FloatArray
) -> LeaseProblem:
    """Read and check what the deadline policy needs; raises `InputError` naming the field."""
    nodes, column, gpus_per_node = _cluster(snapshot)
    lease = _lease(snapshot, overhead)
    now = snapshot.now or 0.0
    demand = np.array([job.scale_factor for job in snapshot.jobs], dtype=np.int64)
    capacity = gpus_per_node * len(nodes)
    errors = [
        FieldError(
            ("snapshot", "jobs", int(j), "scale_factor"),
            f"demand of {int(demand[j])} GPUs exceeds the cluster's {capacity}",
            "too_large",
        )
        for j in np.flatnonzero(demand > capacity)
    ]
    kinds = [job_class(job) for job in snapshot.jobs]
    remaining = _remaining_time(snapshot, kinds, throughput[:, column], errors)
    if errors:
        raise InputError(errors)
    leases = np.ceil(remaining / (lease - overhead) - ROUNDING)
    leases = np.where(np.isfinite(leases), np.maximum(leases, 0), np.iinfo(np.int32).max)
    row_job, row_option, row_time, row_value = _option_rows(snapshot)
    raw = np.floor((row_time - now) / lease + ROUNDING).astype(np.int64)
    return LeaseProblem(
        job_ids=[job.id for job in snapshot.jobs],
        node_ids=[n.id for n in nodes],
        gpus_per_node=gpus_per_node,
        gpu_column=column,
        lease=lease,
        now=now,
        horizon=int(min(horizon_slots, max(1, int(raw.max(initial=1))))),
        demand=demand,
        reserve=round_up(demand, gpus_per_node),
        remaining=remaining,
        leases=leases.astype(np.int64),
        kind=kinds,
        guaranteed=np.array([job.guaranteed for job in snapshot.jobs], dtype=bool),
        row_job=row_job,
        row_option=row_option,
        row_time=row_time,
        row_value=row_value,
        row_slots_raw=raw,
    )


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
