"""The lease grid a call lands on, and what the jobs that hold GPUs leave free (FORMULATIONS §6).

Leases follow one fixed grid: slot t is [lease_start + tℓ, lease_start + (t+1)ℓ), so a call
between two boundaries plans on the caller's own leases, not on a grid shifted to `now`. Slot 0
is the current lease; only [now, lease_start + ℓ) of it is left.

Work, per job j with remaining estimate E_j, overhead o_j and safety margin m, is counted in
*leases of work* u_j = ℓ − o_j (checkpoint and restore are paid in every lease it is given):

* E'_j = (1 + m) E_j and L_j = ⌈E'_j / u_j⌉ leases, as before, for a job that starts in a full
  lease;
* a job that does not hold GPUs and starts now gets w_j = lease_start + ℓ − now − o_j of work in
  slot 0; slot 0 may be planned for it only when that is worth a whole lease at the end,
  ⌈(E'_j − w_j)/u_j⌉ = L_j − 1 (always true at a boundary), and then counts as one of its L_j;
* a job that holds its GPUs until T (`held_until`) keeps them in every slot starting before T
  (h_j slots, never moved), does (T − now) of work there (its overhead is already paid and is in
  its estimate), and needs ⌈(E'_j − (T − now))/u_j⌉ more leases from slot h_j on; if none, it
  ends at now + E'_j, which must meet the deadline.

Its last lease need not be whole: what is left for it, the tail τ_j (E'_j less the leases before
it), is done o_j + τ_j after that lease starts. Starting in slot 0 leaves the larger tail
E'_j − w_j − (L_j − 2)u_j; a new job is counted with it when slot 0 may be its first; a
guaranteed job that holds nothing is counted with the smaller one and planned from slot 1
(at a boundary the two agree), so a plan made earlier in the lease stays valid.
Option v with deadline d is met when every lease lies in the first M_v = ⌊(d − lease_start)/ℓ⌋
slots, or one more when a last lease started at the beginning of slot M_v (at `now` in slot 0)
still ends by d: a job's leases are interchangeable, so slot M_v can only be its last.

What holders leave free: per slot with holdings, node n has f_n free GPUs. Reserved sizes form
the divisible chain 1 | 2 | 4 | … | G (multiples of G take whole empty nodes), and such sizes
fit consolidated into bins of sizes f_n exactly when, for every chain size s,

    Σ_{jobs with r_j ≥ s} r_j  ≤  s · Σ_n ⌊f_n / s⌋                      (level s)

(necessary: the pieces of size ≥ s on node n are multiples of s, so they fill at most
s⌊f_n/s⌋; sufficient: placing sizes largest first, any node with room lowers every smaller
level's right side by exactly the piece, because s divides every larger size). On an empty slot
every level is the cluster's capacity C and only level 1 (the plain capacity row) is written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.snapshot import Snapshot

#: Slack on ⌈E/ℓ⌉ and ⌊(d − start)/ℓ⌋ so that 3600 s / 1200 s is 3 leases, not 4.
ROUNDING = 1e-9


def size_ladder(gpus_per_node: int) -> IntArray:
    """Sizes below a node that pack consolidated: powers of two dividing G, then G itself."""
    sizes = [1]
    while gpus_per_node % (sizes[-1] * 2) == 0:
        sizes.append(sizes[-1] * 2)
    if sizes[-1] != gpus_per_node:
        sizes.append(gpus_per_node)
    return np.array(sizes, dtype=np.int64)


def level_capacity(free: IntArray, ladder: IntArray) -> IntArray:
    """s · Σ_n ⌊f_n / s⌋ per slot (rows of `free`, GPUs free per node) and chain size s."""
    whole: IntArray = (free[:, :, None] // ladder[None, None, :]).sum(axis=1)
    return ladder[None, :] * whole


def ceil_leases(work: FloatArray, per_lease: FloatArray) -> IntArray:
    """⌈work / per lease⌉, 0 for no work, a huge count for unknown (infinite) work."""
    count = np.ceil(np.maximum(work, 0.0) / per_lease - ROUNDING)
    count = np.where(np.isfinite(count), np.maximum(count, 0), np.iinfo(np.int32).max)
    return count.astype(np.int64)


@dataclass(frozen=True)
class Holdings:
    """Jobs that hold GPUs now: where, for how many slots, and what they leave free."""

    until: FloatArray  # per job: end of its hold (NaN: holds nothing)
    slots: IntArray  # per job: h_j, the slots its hold reaches into (0: none)
    nodes: dict[int, dict[int, int]]  # holder → node index → GPUs
    free: IntArray  # (max h_j, nodes): GPUs free per node in each slot with holdings
    # Jobs that run now without holding their GPUs (a call at a lease boundary): where, so that
    # a job that goes on running can stay there and pay no restart.
    current: dict[int, dict[int, int]]

    @property
    def holders(self) -> IntArray:
        return np.flatnonzero(self.slots > 0)


def read_holdings(
    snapshot: Snapshot, node_ids: list[str], gpus_per_node: int, start: float, lease: float
) -> Holdings:
    """Holds that outlast `now`: a job with `held_until` after now and a placement; the other
    placements are where jobs run now."""
    now = snapshot.now or 0.0
    index = {node: n for n, node in enumerate(node_ids)}
    until = np.full(len(snapshot.jobs), np.nan)
    slots = np.zeros(len(snapshot.jobs), dtype=np.int64)
    nodes: dict[int, dict[int, int]] = {}
    current: dict[int, dict[int, int]] = {}
    for j, job in enumerate(snapshot.jobs):
        if job.placement is None:
            continue
        if job.held_until is None or job.held_until <= now:
            current[j] = {index[node]: gpus for node, gpus in job.placement.items()}
            continue
        until[j] = job.held_until
        slots[j] = max(1, int(np.ceil((job.held_until - start) / lease - ROUNDING)))
        nodes[j] = {index[node]: gpus for node, gpus in job.placement.items()}
    free = np.full((int(slots.max(initial=0)), len(node_ids)), gpus_per_node, dtype=np.int64)
    for j, held in nodes.items():
        for n, gpus in held.items():
            free[: slots[j], n] -= gpus
    return Holdings(until, slots, nodes, free, current)


@dataclass(frozen=True)
class Work:
    """Leases each job still needs, and the first slot it may be planned in."""

    leases: IntArray  # L_j
    first_slot: IntArray
    done_by: FloatArray  # a holder that ends within its hold: when (NaN otherwise)
    tail: FloatArray  # seconds of work left for the job's last lease, at most


def count_work(
    remaining: FloatArray,
    overhead: FloatArray,
    margin: float | FloatArray,
    holdings: Holdings,
    now: float,
    start: float,
    lease: float,
    guaranteed: BoolArray,
) -> Work:
    """L_j, the first plannable slot and in-hold finish times, as the module docstring says."""
    work = remaining * (1.0 + margin)
    per_lease = lease - overhead
    leases = ceil_leases(work, per_lease)
    slot0 = start + lease - now - overhead  # w_j: work a job starting now does in slot 0
    after_slot0 = ceil_leases(work - slot0, per_lease)
    first = np.where((slot0 > 0) & (after_slot0 < leases), 0, 1).astype(np.int64)
    first[leases == 0] = 0
    tail = work - (leases - 1) * per_lease
    # Starting in slot 0 leaves more for the last lease (w_j ≤ u_j). A guaranteed job was
    # planned without it (it would hold GPUs otherwise): it keeps the smaller tail and is
    # planned from slot 1, so that its plan stays valid as the lease wears on.
    from_slot0 = np.where(leases >= 2, work - slot0 - (leases - 2) * per_lease, work)
    larger = (first == 0) & (from_slot0 > tail + ROUNDING * lease)
    first[larger & guaranteed] = 1
    tail = np.where(larger & ~guaranteed, from_slot0, tail)
    done_by = np.full(remaining.size, np.nan)
    held = holdings.holders
    if held.size:
        left = work[held] - (holdings.until[held] - now)
        leases[held] = ceil_leases(left, per_lease[held])
        first[held] = holdings.slots[held]
        tail[held] = left - (leases[held] - 1) * per_lease[held]
        ends = leases[held] == 0
        done_by[held[ends]] = now + work[held[ends]]
    return Work(leases, first, done_by, np.where(leases > 0, tail, 0.0))
