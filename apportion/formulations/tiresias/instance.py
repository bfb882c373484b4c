"""A Tiresias snapshot in array form: nodes, what running jobs hold, each job's gang, the GPU
types it can use, whether it must be consolidated, and what stopping it would cost.

A job is *sensitive* when it asks to be consolidated (`consolidate`) or its model is skewed:
its largest tensor is more than `pack_limit` of the model (`tensor_sizes`; Tiresias's PACKLIMIT).
A sensitive gang of g GPUs on a type runs on the fewest nodes of that type that can hold g
(one node when g fits one); a 1-GPU job is consolidated wherever it runs. A running job keeps
its GPUs or stops: it is never moved.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.errors import InputError
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.view import node_type
from apportion.solver.sparse import sp


@dataclass
class Instance:
    job_ids: list[str]
    type_names: list[str]
    node_ids: list[str]
    node_gpus: IntArray
    node_type: IntArray
    held: sp.csr_matrix  # (jobs × nodes) GPUs each running job holds on each node
    gang: IntArray
    usable: BoolArray  # (jobs × types) positive throughput and the gang fits the type
    fewest: IntArray  # (jobs × types) the fewest nodes of the type that hold the gang
    running: BoolArray
    sensitive: BoolArray  # consolidated: gang ≥ 2 and consolidate or skewed
    skew: FloatArray  # largest tensor's share of the model, NaN without tensor sizes
    cost: FloatArray  # GPU-seconds lost if stopped (0 for waiting jobs)
    tensors: list[FloatArray | None] = field(default_factory=list)  # tensor sizes, per job
    reasons: dict[int, str] = field(default_factory=dict)

    @property
    def num_jobs(self) -> int:
        return len(self.job_ids)

    @property
    def free(self) -> IntArray:
        """GPUs per node that no running job holds."""
        return self.node_gpus - np.asarray(self.held.sum(axis=0)).ravel().astype(np.int64)

    def holding(self, j: int) -> tuple[IntArray, IntArray]:
        """The nodes running job j holds GPUs on, and how many on each."""
        lo, hi = self.held.indptr[j], self.held.indptr[j + 1]
        return self.held.indices[lo:hi], self.held.data[lo:hi]

    @property
    def type_gpus(self) -> IntArray:
        return np.bincount(self.node_type, self.node_gpus, len(self.type_names)).astype(np.int64)

    @property
    def run_type(self) -> IntArray:
        """The type each running job runs on (−1 for waiting jobs)."""
        out = np.full(self.num_jobs, -1, dtype=np.int64)
        rows, cols = self.held.nonzero()
        out[rows] = self.node_type[cols]
        return out

    @property
    def schedulable(self) -> BoolArray:
        """Jobs that may run: running ones (they keep their GPUs) and waiting ones with a type
        their gang fits."""
        return self.running | self.usable.any(axis=1)


def build_instance(snapshot: Snapshot, pack_limit: float, preemption_cost: float) -> Instance:
    if snapshot.nodes is None:
        raise InputError.single(
            ("nodes",), "Tiresias policies place gangs on nodes: give the snapshot's nodes"
        )
    nodes = snapshot.nodes
    type_names = [g.name for g in snapshot.gpu_types]
    node_gpus = np.array([n.gpus for n in nodes], dtype=np.int64)
    node_kind = np.array([type_names.index(node_type(snapshot, n)) for n in nodes], np.int64)
    jobs = snapshot.jobs
    gang = np.array([job.scale_factor for job in jobs], dtype=np.int64)
    held = _held(snapshot, {n.id: i for i, n in enumerate(nodes)})
    running = np.asarray(held.sum(axis=1)).ravel() > 0
    thr = np.array(
        [[job.throughput.get(k, 0.0) for k in type_names] for job in jobs], dtype=float
    ).reshape(len(jobs), len(type_names))  # (0 × types) when no job is given
    fewest = _fewest(gang, node_gpus, node_kind, len(type_names))
    usable = (thr > 0) & (fewest > 0)
    skew = np.array([_skew(job.tensor_sizes) for job in jobs], dtype=float)
    asked = np.array([job.consolidate for job in jobs], dtype=bool)
    sensitive = (gang >= 2) & (asked | (np.nan_to_num(skew, nan=0.0) > pack_limit))
    own = np.array(
        [preemption_cost if job.overhead_seconds is None else job.overhead_seconds for job in jobs],
        dtype=float,
    )
    inst = Instance(
        job_ids=[job.id for job in jobs],
        type_names=type_names,
        node_ids=[n.id for n in nodes],
        node_gpus=node_gpus,
        node_type=node_kind,
        held=held,
        gang=gang,
        usable=usable,
        fewest=fewest,
        running=running,
        sensitive=sensitive,
        skew=skew,
        cost=np.where(running, own.reshape(-1) * gang, 0.0),
        tensors=[None if not job.tensor_sizes else np.array(job.tensor_sizes) for job in jobs],
    )
    _explain_unusable(inst, thr)
    return inst


def _held(snapshot: Snapshot, index: dict[str, int]) -> sp.csr_matrix:
    rows, cols, gpus = [], [], []
    for j, job in enumerate(snapshot.jobs):
        for node, count in (job.placement or {}).items():
            rows.append(j)
            cols.append(index[node])
            gpus.append(count)
    shape = (len(snapshot.jobs), len(index))
    held = sp.csr_matrix((np.array(gpus, dtype=np.int64), (rows, cols)), shape=shape)
    held.sum_duplicates()
    return held


def _fewest(gang: IntArray, node_gpus: IntArray, kind: IntArray, types: int) -> IntArray:
    """The fewest nodes of each type whose GPUs add up to each gang (0: the type is too
    small), from its nodes' sizes, largest first."""
    out = np.zeros((gang.size, types), dtype=np.int64)
    for k in range(types):
        sizes = np.sort(node_gpus[kind == k])[::-1]
        if not sizes.size:
            continue
        reach = np.cumsum(sizes)
        need = np.searchsorted(reach, gang, side="left") + 1
        out[:, k] = np.where(gang <= reach[-1], need, 0)
    return out


def _skew(sizes: list[float] | None) -> float:
    if not sizes:
        return float("nan")
    return float(max(sizes) / sum(sizes))


def _explain_unusable(inst: Instance, thr: FloatArray) -> None:
    for j in np.flatnonzero(~inst.schedulable).tolist():
        runs_on = [inst.type_names[k] for k in np.flatnonzero(thr[j] > 0).tolist()]
        inst.reasons[j] = (
            f"fits nowhere: {inst.gang[j]} GPUs, more than any type it runs on has"
            if runs_on
            else "runs nowhere: no positive throughput on any GPU type"
        )
