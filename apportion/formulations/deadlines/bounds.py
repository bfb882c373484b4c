"""Cheap bounds on the earliest deadline a rejected job could be guaranteed (`earliest`).

Upper bounds, by packing late and by repair. Packing late: every kept job at its option and j
due by M, each lease as late as it can go (`lease_plan.latest`, slots filled from the last one
back, least room behind first): the reservations move out of j's early slots whenever their
own deadlines allow. Repair: start from the returned plan with job j left out: j needs L_j slots in
[first_j, M) with room for its r_j GPUs at every chain level it counts in (`grid`). Take the
L_j slots of that window that lack the least, latest first; for each that lacks room, move
other jobs' leases out of it, largest first, each to the latest slot of its own window (first
slot … its option's M) it does not already hold, that has room for it and that j does not
take. If every chosen slot then has room, the plan with j is valid (it is checked, rule by
rule): M admits j. A repair that fails proves nothing.

Lower bound, by energy. Whatever the plan, every job k must run at least
need_k(a, b) = max(0, L_k − |window_k \\ [a, b)|) of its leases inside any interval of slots
[a, b), so M does not admit j when, for some interval,

    Σ_k r_k · need_k(a, b)  >  Σ_{t ∈ [a, b)} C_t        (C_t: the slot's free GPUs)

over the kept jobs and j with window [first_j, M). A necessary condition, monotone in M,
checked at once in numpy for the intervals from a window's first slot to a window's end (any
subset of intervals keeps it necessary): bisection on it raises the lower bound without a
model.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.deadlines.lease_plan import LeasePlan, fits, latest, take
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import BoolArray, IntArray


def windows(problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, horizon: int) -> IntArray:
    """Per job: the end of its window (its kept option's M, capped at `horizon`; 0 if not
    kept)."""
    end = np.zeros(problem.num_jobs, dtype=np.int64)
    kept = np.flatnonzero(keep & plan.admitted)
    # As `earliest.fixed` keeps them: within the plan's own horizon.
    end[kept] = np.minimum(problem.row_slots_raw[plan.row[kept]], min(horizon, problem.horizon))
    return end


def energy_admits(
    problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, j: int, slots: int, horizon: int
) -> bool:
    """False when some interval of slots needs more GPU-leases than it has (module docstring)
    with j due by `slots`; True proves nothing."""
    end = windows(problem, plan, keep, horizon)
    end[j] = slots
    jobs = np.flatnonzero(end > 0)
    start, stop = problem.first_slot[jobs], end[jobs]
    need, size = problem.leases[jobs], problem.reserve[jobs]
    caps = np.full(horizon, problem.capacity, dtype=np.int64)
    held = problem.holdings.free[:horizon].sum(axis=1)
    caps[: held.size] = held
    room = np.concatenate([[0], np.cumsum(caps)])
    # Intervals from a window's first slot to a window's end: where the sums change.
    grid_a, grid_b = np.meshgrid(np.unique(start), np.unique(stop), indexing="ij")
    a, b = grid_a.ravel(), grid_b.ravel()
    a, b = a[a < b], b[a < b]
    inside = np.clip(
        np.minimum(b[None, :], stop[:, None]) - np.maximum(a[None, :], start[:, None]), 0, None
    )
    outside = (stop - start)[:, None] - inside
    must = np.clip(need[:, None] - outside, 0, None)
    demand = size @ must
    return bool((demand <= room[b] - room[a]).all())


def repair(
    problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, j: int, slots: int, horizon: int
) -> LeasePlan | None:
    """The kept jobs' plan, repaired to take j by `slots` (module docstring), or None."""
    end = windows(problem, plan, keep, horizon)
    held = np.zeros((problem.num_jobs, horizon), dtype=bool)
    held[:, : problem.horizon] = plan.slots & keep[:, None]
    held[j] = False
    out = LeasePlan(np.where(keep, plan.row, -1), held)
    wide = _widened(problem, horizon)
    room = out.room(wide)
    first, need = int(problem.first_slot[j]), int(problem.leases[j])
    window = np.arange(first, min(slots, horizon))
    if window.size < need:
        return None
    lack = _lack(wide, room[window], j)
    chosen = window[np.lexsort((-window, lack))][:need]
    taken = np.zeros(horizon, dtype=bool)
    taken[chosen] = True
    for t in chosen[lack[np.searchsorted(window, chosen)] > 0].tolist():
        if not _make_room(wide, out, room, end, taken, j, t):
            return None
    out.slots[j, chosen] = True
    take(room, wide, j, chosen)
    return out


def packed_late(narrowed: LeaseProblem, jobs: IntArray) -> LeasePlan | None:
    """The narrowed problem's jobs (each with its one option row, `earliest.fixed`) packed as
    late as they go, or None."""
    rows = LeasePlan.empty(narrowed)
    rows.row[narrowed.row_job] = np.arange(narrowed.row_job.size)
    return latest(narrowed, rows) if jobs.size else rows


def _widened(problem: LeaseProblem, horizon: int) -> LeaseProblem:
    from dataclasses import replace

    return problem if horizon == problem.horizon else replace(problem, horizon=horizon)


def _lack(problem: LeaseProblem, room: IntArray, j: int) -> IntArray:
    """GPUs each slot (rows of `room`) lacks for j at its tightest level."""
    levels = problem.reserve_levels[j]
    short: IntArray = np.clip(problem.reserve[j] - room[:, levels], 0, None).max(axis=1)
    return short


def _make_room(
    problem: LeaseProblem,
    plan: LeasePlan,
    room: IntArray,
    end: IntArray,
    taken: BoolArray,
    j: int,
    t: int,
) -> bool:
    """Move leases out of slot t, largest first, until j fits there (updates in place)."""
    movers = np.flatnonzero(plan.slots[:, t])
    for k in movers[np.argsort(-problem.reserve[movers], kind="stable")].tolist():
        if fits(room[t : t + 1], problem, j)[0]:
            return True
        candidates = np.arange(problem.first_slot[k], end[k])
        candidates = candidates[~plan.slots[k, candidates] & ~taken[candidates]]
        candidates = candidates[fits(room[candidates], problem, k)]
        if candidates.size == 0:
            continue
        to = candidates[-1:]
        plan.slots[k, t], plan.slots[k, to[0]] = False, True
        take(room, problem, k, np.array([t]), sign=-1)
        take(room, problem, k, to)
    return bool(fits(room[t : t + 1], problem, j)[0])
