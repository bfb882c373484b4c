"""Chronus's own admission, one job at a time: the baseline of `admission=one_by_one`.

Its rules are those of Chronus's scheduler (`time_aware_with_lease.py`, `solver.py`):

* Leases are whole: option v of a job is met when its leases lie in the first
  M_v = ⌊(d_v − lease_start)/ℓ⌋ slots (no partial last lease), and a job is admitted into
  leases from the next boundary on (slot ≥ 1: the current lease was planned at its start);
  Chronus checks arrivals every quarter lease, so one arriving in the last quarter is checked
  after the next boundary's plan and gets leases from the one after (slot ≥ 2).
* Jobs already guaranteed keep their guarantee: the greedy packing of `lease_plan` places them,
  and when it cannot, the fewest-broken MILPs of `guarantees` do (Chronus solves its MILP then
  too).
* A job is offered once, in the call at its arrival (`arrival_time` = now; a job that gives no
  arrival time is offered at every call): declined then, it is never admitted later.
* The offered jobs are checked one by one in the snapshot's order, each at its *first* option
  only (the one with the least slack in Chronus's sort): the batch of jobs admitted in this
  call and it are packed afresh, largest first, then least slack (M − L), then latest deadline,
  each on the latest slots before its deadline that the guaranteed jobs leave free. Admitted
  when that packs.
* A declined job stays in the batch for the rest of the call (Chronus's lists keep its rows):
  a strict one at the smallest M' at which the packing succeeds (its binary search), taking
  room from the jobs after it; a soft one at its first option, which no longer packs, so every
  job offered after it in the call is declined.
* σ (adaptive): guaranteed work runs as early as it can (Chronus's `maximize`) unless a declined
  SLO job that can still meet its first deadline waits (`minimize`); best-effort jobs do not
  count.
* Spare GPUs are lent in Chronus's orders: at a boundary or an arrival check (`best_func`),
  declined SLO and best-effort jobs by remaining GPU-time, then guaranteed jobs, then jobs that
  can meet no deadline, each by slack GPU-time; between checks (`filling_jobs`, its ascending
  sort), jobs that can meet no deadline first, then guaranteed jobs by most slack, then
  declined, then best-effort jobs, by most remaining GPU-time.

This is what the joint MILP is measured against: the one-by-one order cannot give up an early
small job for two later ones, and a job is never admitted at a later, less valuable option.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from apportion.formulations.deadlines.decision import Admission
from apportion.formulations.deadlines.grid import ROUNDING
from apportion.formulations.deadlines.guarantees import fewest_broken
from apportion.formulations.deadlines.lease_plan import (
    LeasePlan,
    fits,
    greedy_plan,
    plan_violations,
    take,
)
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.formulations.deadlines.report import broken_jointly
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.context import SolveContext
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

#: Seconds within which a job's arrival counts as this call's (float round-off).
ARRIVAL_TOLERANCE = 1e-6
#: Chronus looks at arrivals every 5 minutes of its 20-minute leases.
CHECKS_PER_LEASE = 4
Batch = list[tuple[int, int]]  # (job, M) in the order Chronus lists them


def arrivals(snapshot: Snapshot) -> FloatArray:
    """Each job's arrival time, NaN when the snapshot does not give it."""
    return np.array(
        [np.nan if j.arrival_time is None else j.arrival_time for j in snapshot.jobs], dtype=float
    )


def one_by_one(
    problem: LeaseProblem,
    jobs: IntArray,
    broken: dict[int, str],
    sigma: int | str,
    ctx: SolveContext,
    arrival: FloatArray | None = None,
) -> Admission:
    """Keep the guaranteed jobs, then offer the jobs arriving now one at a time."""
    kept = jobs[problem.guaranteed[jobs]]
    plan, lost = greedy_plan(problem, kept)
    status = Status.FALLBACK
    if lost.size:
        exact = fewest_broken(problem, kept, ctx)
        if exact is not None:
            plan = exact
            lost = kept[~exact.admitted[kept]]
    for j in lost.tolist():
        broken[j] = broken_jointly(problem, j)
    greedy_value = plan.value(problem)
    arriving = offered(problem, arrival)
    plan = admit_batch(whole_leases(problem), plan, arriving)
    chosen = chronus_sigma(problem, plan) if sigma == "adaptive" else int(sigma)
    admission = Admission(plan, status if broken else Status.FEASIBLE, chosen, greedy_value)
    at_boundary = problem.now - problem.lease_start <= ROUNDING * problem.lease
    admission.lending = chronus_lending if at_boundary or arriving.size else chronus_filling
    admission.broken = broken
    admission.detail = "one by one at arrival, first option, whole leases (Chronus)"
    return admission


def whole_leases(problem: LeaseProblem) -> LeaseProblem:
    """The problem as Chronus counts a new job: M = ⌊(d − lease_start)/ℓ⌋ and not in slot 0.
    Guaranteed jobs keep the rows they were promised on (the plan carried between calls)."""
    new = ~problem.guaranteed
    raw = np.floor((problem.row_time - problem.lease_start) / problem.lease + ROUNDING)
    whole = np.minimum(raw.astype(np.int64), problem.row_slots_raw)
    # Chronus checks arrivals every quarter lease; one in the last quarter is checked at the
    # boundary, after that lease was planned, and starts from the lease after it.
    quarter = problem.lease / CHECKS_PER_LEASE
    tick = np.ceil((problem.now - problem.lease_start) / quarter - ROUNDING) * quarter
    earliest = 2 if tick >= problem.lease * (1 - ROUNDING) else 1
    first = np.where(new, np.maximum(problem.first_slot, earliest), problem.first_slot)
    return replace(
        problem,
        row_slots_raw=np.where(new[problem.row_job], whole, problem.row_slots_raw),
        first_slot=first.astype(np.int64),
    )


def offered(problem: LeaseProblem, arrival: FloatArray | None) -> IntArray:
    """SLO jobs not guaranteed that arrive now (all of them when arrival times are unknown),
    that the cluster can hold, in snapshot order."""
    mask: BoolArray = problem.is_slo & ~problem.guaranteed & problem.fits_cluster
    if arrival is not None:
        unknown = np.isnan(arrival)
        mask &= unknown | (arrival >= problem.now - ARRIVAL_TOLERANCE)
    return np.flatnonzero(mask)


def admit_batch(problem: LeaseProblem, plan: LeasePlan, offered: IntArray) -> LeasePlan:
    """Chronus's event loop over the jobs offered in one call (module docstring)."""
    room = plan.room(problem)
    batch: Batch = []
    admitted: list[int] = []
    packed: dict[int, IntArray] = {}
    for j in offered.tolist():
        first = first_option(problem, j)
        deadline = int(problem.row_slots[first])
        trial = pack(problem, room, [*batch, (j, deadline)])
        if trial is not None:
            batch.append((j, deadline))
            admitted.append(j)
            packed = trial
            continue
        if problem.rows_of(j).size > 1:
            break  # its first option stays in the batch and never packs again
        extended = extend(problem, room, batch, j, deadline)
        if extended is not None:
            batch.append((j, extended[0]))
            packed = extended[1]
    out = LeasePlan(plan.row.copy(), plan.slots.copy())
    for j in admitted:
        out.row[j] = first_option(problem, j)
        out.slots[j, packed[j]] = True
    return out if not plan_violations(problem, out) else plan


def first_option(problem: LeaseProblem, j: int) -> int:
    """The row Chronus checks: its earliest deadline."""
    rows = problem.rows_of(j)
    return int(rows[np.argmin(problem.row_time[rows])])


def pack(problem: LeaseProblem, room: IntArray, batch: Batch) -> dict[int, IntArray] | None:
    """Chronus's `batch_fast_check_if_packable`: the batch, largest first, then least slack
    (M − L), then latest deadline, each on the latest slots before M that have room."""
    left = room.copy()
    out: dict[int, IntArray] = {}
    keyed = sorted(
        batch,
        key=lambda b: (-problem.reserve[b[0]], b[1] - problem.leases[b[0]], -b[1]),
    )
    for j, deadline in keyed:
        need = int(problem.leases[j])
        open_slots = np.flatnonzero(fits(left, problem, j))
        open_slots = open_slots[(open_slots >= problem.first_slot[j]) & (open_slots < deadline)]
        if open_slots.size < need:
            return None
        out[j] = open_slots[open_slots.size - need :]
        take(left, problem, j, out[j])
    return out


def extend(
    problem: LeaseProblem, room: IntArray, batch: Batch, j: int, deadline: int
) -> tuple[int, dict[int, IntArray]] | None:
    """A declined strict job's place in the batch: the smallest M' ≥ max(M, L) at which the
    batch packs (bisected as Chronus does); None when not even the horizon packs (then its
    leases would lie past every deadline planned here and take no one's room)."""
    low, high = max(deadline, int(problem.leases[j])), problem.horizon
    found = pack(problem, room, [*batch, (j, high)])
    if found is None or low > high:
        return None
    while low < high:
        middle = (low + high) // 2
        trial = pack(problem, room, [*batch, (j, middle)])
        if trial is None:
            low = middle + 1
        else:
            high, found = middle, trial
    return high, found


def chronus_sigma(problem: LeaseProblem, plan: LeasePlan) -> int:
    """−1 (guaranteed work as late as it goes) while a declined SLO job that can still meet its
    first deadline waits, else +1."""
    declined = problem.is_slo & ~plan.admitted & (problem.leases > 0)
    first = np.full(problem.num_jobs, np.inf)
    np.minimum.at(first, problem.row_job, problem.row_time)
    reachable = problem.now + problem.remaining <= first + ARRIVAL_TOLERANCE
    return -1 if (declined & reachable).any() else 1


def _lending_keys(
    problem: LeaseProblem, plan: LeasePlan, jobs: IntArray
) -> tuple[IntArray, FloatArray, FloatArray, BoolArray]:
    """Per job of `jobs`: its class (0 declined SLO or best-effort, 1 guaranteed, 2 hopeless),
    remaining GPU-time and slack GPU-time as Chronus ranks them (`emergence`)."""
    first = np.full(problem.num_jobs, np.inf)
    last = np.full(problem.num_jobs, -np.inf)
    np.minimum.at(first, problem.row_job, problem.row_time)
    np.maximum.at(last, problem.row_job, problem.row_time)
    # Chronus's deadline of a job: its first option, moved to its last once admitted.
    deadline = np.where(plan.admitted, last, first)[jobs]
    work = problem.remaining[jobs]
    slack = (deadline - problem.now - work) * problem.demand[jobs]
    hopeless = problem.is_slo[jobs] & (slack < 0)
    kind: IntArray = np.where(hopeless, 2, np.where(plan.admitted[jobs], 1, 0))
    slo: BoolArray = problem.is_slo[jobs]
    return kind, work * problem.demand[jobs], slack, slo


def chronus_lending(problem: LeaseProblem, plan: LeasePlan, jobs: IntArray) -> IntArray:
    """Chronus's order at a lease boundary or an arrival check (`best_func`): declined SLO and
    best-effort jobs by remaining GPU-time, then guaranteed ones, then those that can meet no
    deadline, each by slack GPU-time."""
    kind, work, slack, _ = _lending_keys(problem, plan, jobs)
    rank = np.where(kind == 0, work, slack)
    out: IntArray = jobs[np.lexsort((rank, kind))]
    return out


def chronus_filling(problem: LeaseProblem, plan: LeasePlan, jobs: IntArray) -> IntArray:
    """Chronus's order between checks (`filling_jobs`, its sort ascending by queue and
    emergence): jobs that can meet no deadline first, then guaranteed ones by most slack, then
    declined SLO jobs, then best-effort ones, by most remaining GPU-time."""
    kind, work, slack, slo = _lending_keys(problem, plan, jobs)
    queue = np.where(kind == 2, 0, np.where(kind == 1, 1, np.where(slo, 2, 3)))
    rank = np.where(kind == 0, -work, -slack)
    out: IntArray = jobs[np.lexsort((rank, queue))]
    return out
