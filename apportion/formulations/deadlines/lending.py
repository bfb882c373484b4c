"""Who runs in this lease: the holders, the guaranteed jobs due now, then everything else by
shortest remaining time first on what the guarantees leave free (Chronus, FORMULATIONS §6).

Jobs that hold GPUs keep them. Guaranteed jobs due in slot 0 take consolidated blocks of their
rounded-up size in what the holders leave free (`packing.place_consolidated`); one that ran
before on a consolidated spot that is still free stays there when the other blocks still fit
(the level rows of `grid`, exact), so a lease extension costs no restart. The GPUs left are
lent, in this order:

1. every job that can still gain from running, shortest remaining time first (SRTF):
   best-effort jobs, SLO jobs without a guarantee that can still meet a deadline option if
   they run from now on without a break (now + o_j + E_j ≤ their last deadline), and
   guaranteed jobs not due in this lease (`fill_guaranteed`: what they do now their reserved
   leases need not do; on equal remaining time they go after the others); except that SLO
   jobs without a guarantee that must start in this lease to meet any option go first among
   the SLO jobs when every such deadline still fits (`last_chance`), best-effort jobs keeping
   their places;
2. SLO jobs that can meet no deadline any more: they earn nothing whenever they end (Chronus
   runs them last too).

Before all of them (but after the guaranteed jobs due now), a job at its last chance whose
slack is shorter than its restart stays where it ran up to now (`stay_on`): a stop or a move
would cost it every deadline (`last_chance`).

A job that does not fit is passed over (smaller ones behind it may fit). Who runs is decided in
that order; where, afterwards: a job whose previous GPUs are still free stays on them.

Until when. The plan reserves GPU counts per slot, and whether a slot's reservations fit
consolidated into what is left free is exact (`grid`). A lent job keeps its GPUs, in the order
above, through every later slot whose reservations still fit beside it and the jobs lent before
it; it is lent until the first boundary where they would not (None: no planned reservation
needs them). The caller may run it on until then; the guarantees hold either way.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from apportion.formulations.deadlines.decision import LeaseRun
from apportion.formulations.deadlines.grid import level_capacity
from apportion.formulations.deadlines.last_chance import (
    at_last_chance,
    must_run_on,
    restart,
    slo_first_at_last_chance,
)
from apportion.formulations.deadlines.lease_plan import LeasePlan
from apportion.formulations.deadlines.packing import Placement, fill, place_consolidated, shrink
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray

#: Seconds of slack on "can still meet a deadline" (float round-off on sums of seconds).
TOLERANCE = 1e-6


def run_now(
    problem: LeaseProblem,
    plan: LeasePlan,
    fill_guaranteed: bool,
    allow_split: bool,
    reorder: Callable[[LeaseProblem, LeasePlan, IntArray], IntArray] | None = None,
) -> LeaseRun:
    """Holders stay; guaranteed jobs due now on consolidated blocks; then the lending order
    (`reorder`: another order of the same jobs, a baseline's)."""
    holdings = problem.holdings
    free = (
        holdings.free[0].copy()
        if len(holdings.free)
        else np.full(len(problem.node_ids), problem.gpus_per_node)
    )
    placements = {j: dict(held) for j, held in holdings.nodes.items()}
    mode = dict.fromkeys(placements, "held")
    due = np.flatnonzero(plan.slots[:, 0])
    left = slack(problem)
    last = at_last_chance(problem, plan, left)
    order = lending_order(problem, plan, fill_guaranteed, left, last)
    # A baseline's order comes with its own rules: only the policy's jobs stay on to the end.
    staying = (
        stay_on(problem, must_run_on(problem, last, left), due, free) if reorder is None else {}
    )
    order = order if reorder is None else reorder(problem, plan, order)
    rest = order[~np.isin(order, list(staying))]
    reserved, lent = place(problem, due, rest, free, allow_split)
    lent.update(staying)
    placements.update(reserved)
    mode.update(dict.fromkeys(reserved, "reserved"))
    placements.update(lent)
    mode.update({j: "opportunistic" if plan.admitted[j] else "lent" for j in lent})
    borrowers = [j for j in order.tolist() if j in lent]
    borrowers += [j for j in holdings.nodes if not plan.admitted[j]]
    until = lent_until(problem, plan, borrowers, placements)
    return LeaseRun(placements, mode, int(free.sum()), until)


def slack(problem: LeaseProblem) -> FloatArray:
    """Seconds each job could still wait and meet its earliest reachable deadline option,
    running from then on without a break (one that holds GPUs or ran on them up to now has its
    restart behind it, if it stays); negative: it can meet none; inf: best-effort."""
    finish = problem.now + restart(problem) + problem.remaining
    spare = problem.row_time - finish[problem.row_job]
    best = np.full(problem.num_jobs, -np.inf)
    reachable = spare >= -TOLERANCE
    # The earliest option still reachable is the one with the least spare time among them.
    np.maximum.at(best, problem.row_job[reachable], -spare[reachable])
    out: FloatArray = np.where(np.isfinite(best), -best, -np.inf)
    out[~problem.is_slo] = np.inf
    return out


def stay_on(
    problem: LeaseProblem, jobs: IntArray, due: IntArray, free: IntArray
) -> dict[int, Placement]:
    """`jobs`, which must run on to meet a deadline (`last_chance.must_run_on`), on the GPUs
    they ran on, shortest first, when those are free and the guaranteed jobs due now still fit
    consolidated beside them (`free` updated)."""
    kept: dict[int, Placement] = {}
    for j in jobs[np.argsort(problem.remaining[jobs], kind="stable")].tolist():
        spot = problem.holdings.current[j]
        trial = free.copy()
        for n, g in spot.items():
            trial[n] -= g
        if (trial >= 0).all() and fits_levels(problem.reserve[due], trial, problem.ladder):
            kept[j], free[:] = dict(spot), trial
    return kept


def lending_order(
    problem: LeaseProblem,
    plan: LeasePlan,
    fill_guaranteed: bool,
    left: FloatArray,
    last: BoolArray,
) -> IntArray:
    """Jobs that hold nothing, are not due now and have work left, in the lending order of the
    module docstring (ties by position; `left`: `slack`, `last`: the jobs at their last
    chance)."""
    waiting = (problem.holdings.slots == 0) & (problem.leases > 0) & ~plan.slots[:, 0]
    waiting &= problem.fits_cluster
    if not fill_guaranteed:
        waiting &= ~plan.admitted
    tier = np.where(plan.admitted | (left >= 0), 0, 1)
    jobs = np.flatnonzero(waiting)
    # On equal remaining time a job without a guarantee goes first: the other has its leases.
    keys = (jobs, plan.admitted[jobs], problem.remaining[jobs], tier[jobs])
    order: IntArray = jobs[np.lexsort(keys)]
    return slo_first_at_last_chance(problem, order, last)


def consolidated(spot: Placement, gpus: int, gpus_per_node: int) -> bool:
    """The spot is on one node (whole nodes beyond a node's size)."""
    if gpus <= gpus_per_node:
        return len(spot) == 1
    return all(g == gpus_per_node for g in spot.values())


def fits_levels(sizes: IntArray, free: IntArray, ladder: IntArray) -> bool:
    """Rounded-up sizes fit consolidated into nodes with `free` GPUs (the level rows)."""
    need = (sizes[:, None] * (sizes[:, None] >= ladder[None, :])).sum(axis=0)
    return bool((need <= level_capacity(free[None, :], ladder)[0]).all())


def blocks(problem: LeaseProblem, due: IntArray, free: IntArray) -> dict[int, Placement]:
    """Consolidated round-up blocks for `due`, shrunk to each job's GPUs (`free` updated)."""
    placed = place_consolidated(problem.reserve[due], free, problem.gpus_per_node)
    return {
        j: shrink(block, int(problem.demand[j]), free)
        for j, block in zip(due.tolist(), placed, strict=True)
    }


def place(
    problem: LeaseProblem, due: IntArray, order: IntArray, free: IntArray, allow_split: bool
) -> tuple[dict[int, Placement], dict[int, Placement]]:
    """Placements of the jobs due now and of the lent ones (`free` updated in place).

    Who runs: the due jobs on fresh consolidated blocks, then `fill` in `order` on the rest.
    Where: a job that goes on running keeps its GPUs (a due one only a consolidated spot) as
    long as the due jobs not yet placed still fit consolidated beside it (the level rows); the
    others are placed afresh; if that leaves a lent job out, the fresh placement stands."""
    fresh = free.copy()
    due_fresh = blocks(problem, due, fresh)
    lent_fresh = fill(problem.demand, order, fresh, problem.gpus_per_node, allow_split)
    sticky, kept = free.copy(), {}
    waiting_due = set(due.tolist())
    for j in [*due[np.argsort(-problem.reserve[due], kind="stable")].tolist(), *lent_fresh]:
        spot = problem.holdings.current.get(j)
        if spot is None or any(sticky[n] < g for n, g in spot.items()):
            continue
        if j in waiting_due and not consolidated(
            spot, int(problem.demand[j]), problem.gpus_per_node
        ):
            continue
        trial = sticky.copy()
        for n, g in spot.items():
            trial[n] -= g
        rest = np.array(sorted(waiting_due - {j}), dtype=np.int64)
        if fits_levels(problem.reserve[rest], trial, problem.ladder):
            kept[j], sticky = dict(spot), trial
            waiting_due.discard(j)
    placed_due = {j: kept[j] for j in due.tolist() if j in kept}
    placed_due.update(blocks(problem, np.array(sorted(waiting_due), dtype=np.int64), sticky))
    moving = np.array([j for j in lent_fresh if j not in kept], dtype=np.int64)
    moved = fill(problem.demand, moving, sticky, problem.gpus_per_node, allow_split)
    if len(moved) < moving.size:
        free[:] = fresh
        return due_fresh, lent_fresh
    free[:] = sticky
    return placed_due, {j: kept.get(j) or moved[j] for j in lent_fresh}


def lent_until(
    problem: LeaseProblem, plan: LeasePlan, borrowers: list[int], placements: dict[int, Placement]
) -> dict[int, float | None]:
    """The boundary from which each borrower's GPUs may be needed by the plan (module
    docstring), borrowers in lending order."""
    horizon, nodes = problem.horizon, len(problem.node_ids)
    free = np.full((horizon, nodes), problem.gpus_per_node, dtype=np.int64)
    held = problem.holdings.free[:horizon]
    free[: len(held)] = held
    sized = problem.reserve[:, None] * problem.reserve_levels
    need = plan.slots.T.astype(np.int64) @ sized  # (slot, chain size) reserved
    out: dict[int, float | None] = {}
    for j in borrowers:
        gpus = np.zeros(nodes, dtype=np.int64)
        for n, g in placements[j].items():
            gpus[n] = g
        # A holder's GPUs are already out of `free` in the slots of its hold.
        gpus_t = np.where(np.arange(horizon)[:, None] >= problem.holdings.slots[j], gpus, 0)
        left = free - gpus_t
        fits = np.asarray(
            (left >= 0).all(axis=1) & (level_capacity(left, problem.ladder) >= need).all(axis=1)
        )
        short = np.flatnonzero(~fits[1:]) + 1
        stop = int(short[0]) if short.size else horizon
        out[j] = problem.lease_start + stop * problem.lease if short.size else None
        free[1:stop] -= gpus_t[1:stop]
    return out
