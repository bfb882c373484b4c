"""Chronus's own admission, one job at a time: the baseline of `admission=one_by_one`.

Jobs already guaranteed keep their guarantee: the greedy packing of `lease_plan` places them,
and when it cannot, the fewest-broken MILPs of `guarantees` do (Chronus solves its MILP then
too). New SLO jobs are then taken one by one in the snapshot's order (a scheduler lists them by
arrival), each against what the plan so far leaves free, and never reconsidered within the call:

1. fast check: its most valuable option whose deadline leaves L_j slots with room in the plan
   (the latest ones are taken), as Chronus's `batch_fast_check_if_packable`;
2. else binary search: the smallest M ≤ M_last (its last option's slots) at which the greedy
   packing of every admitted job (each at its option) and this one (all its leases before M)
   fits, as Chronus's `process_unaccepted_jobs`; the job is admitted at its most valuable
   option with M_v ≥ M, on that packing, or declined when M_last does not fit.

This is what the joint MILP is measured against: the one-by-one order cannot give up an early
small job for two later ones, and the greedy repacking misses plans the MILP finds.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.deadlines.decision import Admission
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
from apportion.solver.arraytypes import IntArray
from apportion.solver.context import SolveContext
from apportion.solver.status import Status


def one_by_one(
    problem: LeaseProblem, jobs: IntArray, broken: dict[int, str], sigma: int, ctx: SolveContext
) -> Admission:
    """Keep the guaranteed jobs, then admit the others of `jobs` one at a time."""
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
    for j in jobs[~problem.guaranteed[jobs]].tolist():
        plan = fast_check(problem, plan, j) or binary_search(problem, plan, j) or plan
    admission = Admission(plan, status if broken else Status.FEASIBLE, sigma, greedy_value)
    admission.broken = broken
    admission.detail = "one by one: fast check, then binary search (Chronus)"
    return admission


def fast_check(problem: LeaseProblem, plan: LeasePlan, j: int) -> LeasePlan | None:
    """Job j on the latest free slots before its most valuable option that has room."""
    room = plan.room(problem)
    need, first = int(problem.leases[j]), int(problem.first_slot[j])
    open_slots = np.flatnonzero(fits(room, problem, j))
    open_slots = open_slots[open_slots >= first]
    rows = problem.rows_of(j)
    rows = rows[problem.row_feasible[rows]]
    for i in rows[np.lexsort((problem.row_slots[rows], -problem.row_value[rows]))].tolist():
        usable = open_slots[open_slots < problem.row_slots[i]]
        if usable.size >= need:
            out = LeasePlan(plan.row.copy(), plan.slots.copy())
            out.row[j] = i
            slots = usable[usable.size - need :]
            out.slots[j, slots] = True
            take(room, problem, j, slots)
            return out
    return None


def binary_search(problem: LeaseProblem, plan: LeasePlan, j: int) -> LeasePlan | None:
    """The greedy repacking with j due by the smallest M that fits, bisected up to its last
    option (None: not even that)."""
    rows = problem.rows_of(j)
    rows = rows[problem.row_feasible[rows]]
    if rows.size == 0:
        return None
    low = int(problem.first_slot[j] + problem.leases[j])
    high = int(problem.row_slots[rows].max())
    found = _repack(problem, plan, j, high)
    if found is None:
        return None
    while low < high:
        middle = (low + high) // 2
        packed = _repack(problem, plan, j, middle)
        if packed is None:
            low = middle + 1
        else:
            high, found = middle, packed
    # The most valuable option that the found deadline meets.
    met = rows[problem.row_slots[rows] >= high]
    found.row[j] = int(met[np.lexsort((problem.row_slots[met], -problem.row_value[met]))][0])
    return found if not plan_violations(problem, found) else None


def _repack(problem: LeaseProblem, plan: LeasePlan, j: int, slots: int) -> LeasePlan | None:
    """Every admitted job at its option and j before slot `slots`, packed greedily afresh."""
    # Explanations' module, loaded only when a job needs the search (a plain solve never does).
    from apportion.formulations.deadlines.earliest import fixed

    narrowed, jobs = fixed(problem, plan, plan.admitted, j, slots, problem.horizon)
    packed, lost = greedy_plan(narrowed, jobs)
    if lost.size:
        return None
    out = LeasePlan(plan.row.copy(), packed.slots)
    return out
