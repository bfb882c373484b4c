"""Tiresias's own admission (NSDI'19 Pseudocode 2), and the exact policy's starting point.

1. In serving order, a job is admitted when its gang fits the GPUs of a type it can use that
   jobs admitted before it leave (running jobs behind it count as free: they are preempted), a
   running job on its own type. A high-priority gang that does not fit is skipped and later
   ones go ahead (backfill).
2. Admitted running jobs keep their GPUs; admitted waiting jobs are placed in serving order
   (`placing`): a sensitive one on the fewest nodes or not at all (its GPUs then stay for
   others), the rest into the smallest holes.
3. In serving order, whatever still fits: a running job step 1 stopped keeps its GPUs if they
   are still free, a waiting job not started takes what fits it.

With a preemption cap, the highest-priority running jobs that step 1 would stop beyond the cap
keep their GPUs instead (admitted ahead of everyone), and step 1 runs again, until it stops no
more than the cap (steps 2 and 3 never stop a job step 1 admitted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from apportion.formulations.tiresias.instance import Instance
from apportion.formulations.tiresias.placing import Pieces, consolidated, into_holes, take
from apportion.solver.arraytypes import BoolArray, IntArray


@dataclass
class Decision:
    """Who runs: running jobs kept, waiting jobs started with their type and pieces."""

    kept: BoolArray
    started: dict[int, tuple[int, Pieces]] = field(default_factory=dict)  # job → (type, pieces)

    @property
    def runs(self) -> BoolArray:
        out = self.kept.copy()
        out[list(self.started)] = True
        return out


def greedy(inst: Instance, order: IntArray, max_preemptions: int | None) -> Decision:
    order = order[inst.schedulable[order]]
    forced = np.zeros(inst.num_jobs, dtype=bool)
    admitted = _by_count(inst, order, forced)
    stopped = order[inst.running[order] & ~admitted[order]]
    # Forcing some jobs in can push other running jobs out (their GPUs went to the waiting
    # jobs the forced ones displaced): force again until the cap holds. Each round forces at
    # least one more job, and with every running job forced nothing is stopped.
    while max_preemptions is not None and stopped.size > max_preemptions:
        forced[stopped[: stopped.size - max_preemptions]] = True
        admitted = _by_count(inst, order, forced)
        stopped = order[inst.running[order] & ~admitted[order]]
    decision = Decision(inst.running & admitted)
    free = node_free(inst, decision.kept)
    waiting = order[~inst.running[order]]
    for j in waiting[admitted[waiting]].tolist():
        _start(inst, decision, free, j)
    for j in order[~admitted[order]].tolist():
        if not inst.running[j]:
            _start(inst, decision, free, j)
            continue
        nodes, gpus = inst.holding(j)
        if (free[nodes] >= gpus).all():
            decision.kept[j] = True
            free[nodes] -= gpus
    return decision


def _start(inst: Instance, decision: Decision, free: IntArray, j: int) -> None:
    placed = place_one(inst, free, j)
    if placed is not None:
        decision.started[j] = placed
        take(free, placed[1])


def _by_count(inst: Instance, order: IntArray, forced: BoolArray) -> BoolArray:
    """Step 1: admission by GPU counts per type, forced jobs first."""
    free = inst.type_gpus.copy()
    kind = inst.run_type
    admitted = np.zeros(inst.num_jobs, dtype=bool)
    for j in [*order[forced[order]].tolist(), *order[~forced[order]].tolist()]:
        g = int(inst.gang[j])
        if inst.running[j]:
            k = int(kind[j])
        else:
            room = np.flatnonzero(inst.usable[j] & (free >= g))
            if not room.size:
                continue
            k = int(room[0])
        if free[k] >= g or forced[j]:
            free[k] -= g
            admitted[j] = True
    return admitted


def node_free(inst: Instance, kept: BoolArray) -> IntArray:
    """GPUs per node once the running jobs not kept have stopped."""
    held = np.asarray(inst.held[np.flatnonzero(kept)].sum(axis=0)).ravel().astype(np.int64)
    return inst.node_gpus - held


def place_one(inst: Instance, free: IntArray, j: int) -> tuple[int, Pieces] | None:
    """Job j on the first type it can use where its gang fits, placed by its rule."""
    g = int(inst.gang[j])
    for k in np.flatnonzero(inst.usable[j]).tolist():
        on_type = np.flatnonzero(inst.node_type == k)
        if inst.sensitive[j]:
            pieces = consolidated(free, on_type, g, int(inst.fewest[j, k]))
        else:
            pieces = into_holes(free, on_type, g)
        if pieces is not None:
            return k, pieces
    return None
