"""Lease plans: which deadline option each SLO job gets and the slots reserved for it.

`greedy_plan` is the packing of FORMULATIONS §6 (Chronus's admission test, applied to a batch):
guaranteed jobs first, least slack and largest first, each on the latest slots before its
deadline that still have room; then new jobs by value, trying their most valuable option first.
It is the MILP's starting incumbent and the fallback when the MILP has no answer.
`plan_violations` checks any plan against the rules, independently of how it was made.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import BoolArray, IntArray


@dataclass
class LeasePlan:
    """`row[j]` is the chosen option row of job j (−1: none); `slots[j, t]` its reserved slots."""

    row: IntArray
    slots: BoolArray

    @classmethod
    def empty(cls, problem: LeaseProblem) -> LeasePlan:
        return cls(
            np.full(problem.num_jobs, -1, dtype=np.int64),
            np.zeros((problem.num_jobs, problem.horizon), dtype=bool),
        )

    @property
    def admitted(self) -> BoolArray:
        return self.row >= 0

    def value(self, problem: LeaseProblem) -> float:
        return float(problem.row_value[self.row[self.admitted]].sum())

    def reserved_per_slot(self, problem: LeaseProblem) -> IntArray:
        """GPUs reserved in each slot: Σ_j RU(g_j) x_{j,t}."""
        return (problem.reserve @ self.slots).astype(np.int64)

    def room(self, problem: LeaseProblem) -> IntArray:
        """(slot, chain size): what each level of each slot has left (`grid`); column 0 is
        the slot's free GPUs."""
        sized = problem.reserve[:, None] * problem.reserve_levels
        return problem.level_caps - (self.slots.T.astype(np.int64) @ sized)


def fits(room: IntArray, problem: LeaseProblem, j: int) -> NDArray[np.bool_]:
    """Per slot (rows of `room`): whether job j's reservation fits at every level it counts."""
    levels = problem.reserve_levels[j]
    return np.asarray((room[:, levels] >= problem.reserve[j]).all(axis=1))


def take(room: IntArray, problem: LeaseProblem, j: int, slots: IntArray, sign: int = 1) -> None:
    """Reserve (sign 1) or release (−1) job j's GPUs in `slots` of `room`, in place."""
    room[np.ix_(slots, np.flatnonzero(problem.reserve_levels[j]))] -= sign * problem.reserve[j]


def plan_violations(problem: LeaseProblem, plan: LeasePlan) -> list[str]:
    """Every broken rule of a plan, in words (empty for a valid plan)."""
    out: list[str] = []
    chosen = np.flatnonzero(plan.admitted)
    wrong_job = chosen[problem.row_job[plan.row[chosen]] != chosen]
    out += [f"job {j}: option row belongs to another job" for j in wrong_job]
    count = plan.slots.sum(axis=1)
    needed = np.where(plan.admitted, problem.leases, 0)
    out += [
        f"job {j}: {count[j]} slots reserved, {needed[j]} needed"
        for j in np.flatnonzero(count != needed)
    ]
    limit = np.zeros(problem.num_jobs, dtype=np.int64)
    limit[chosen] = problem.row_slots[plan.row[chosen]]
    last = np.where(plan.slots.any(axis=1), problem.horizon - np.argmax(plan.slots[:, ::-1], 1), 0)
    out += [
        f"job {j}: slot {last[j] - 1} is past its deadline" for j in np.flatnonzero(last > limit)
    ]
    early = np.arange(problem.horizon)[None, :] < problem.first_slot[:, None]
    out += [
        f"job {j}: a slot before its first plannable one"
        for j in np.flatnonzero((plan.slots & early).any(axis=1))
    ]
    room = plan.room(problem)
    out += [
        f"slot {t}: reservations of ≥ {problem.ladder[k]} GPUs exceed the "
        f"{problem.level_caps[t, k]} that fit"
        for t, k in zip(*np.nonzero(room < 0), strict=True)
    ]
    return out


def greedy_plan(
    problem: LeaseProblem, jobs: IntArray, by_density: bool = False
) -> tuple[LeasePlan, IntArray]:
    """Pack `jobs` (SLO jobs with at least one feasible option) greedily, most valuable option
    first, latest slots; `by_density` orders new jobs by value per GPU-lease instead of by value.

    Returns the plan and the guaranteed jobs it could not keep."""
    # Most valuable option first; among equals the earliest deadline.
    option_rank = np.lexsort((problem.row_slots, -problem.row_value)).argsort()
    return pack(problem, _order(problem, jobs, by_density), option_rank)


def pack(
    problem: LeaseProblem,
    order: IntArray,
    option_rank: IntArray,
    slot_score: NDArray[np.float64] | None = None,
) -> tuple[LeasePlan, IntArray]:
    """Jobs in `order` take their first option (lowest `option_rank`) that still fits, on the
    slots with the highest `slot_score[j, t]` that have room (latest first on ties, or when no
    score is given). Returns the plan and the guaranteed jobs left out."""
    plan = LeasePlan.empty(problem)
    free = problem.level_caps.copy()
    broken: list[int] = []
    for j in order:
        rows = problem.rows_of(j)
        rows = rows[problem.row_feasible[rows]]
        need, first = int(problem.leases[j]), int(problem.first_slot[j])
        open_slots = np.flatnonzero(fits(free, problem, j))
        open_slots = open_slots[open_slots >= first]
        for i in rows[np.argsort(option_rank[rows])]:
            room = open_slots[open_slots < problem.row_slots[i]]
            if room.size < need:
                continue
            if slot_score is None:
                slots = room[room.size - need :]
            else:
                slots = room[np.lexsort((-room, -slot_score[j, room]))][:need]
            plan.row[j] = i
            plan.slots[j, slots] = True
            take(free, problem, j, slots)
            break
        else:
            if problem.guaranteed[j]:
                broken.append(int(j))
    return plan, np.array(broken, dtype=np.int64)


def best_value_per_job(problem: LeaseProblem) -> NDArray[np.float64]:
    """The value of each job's most valuable feasible option (0 without one)."""
    best = np.zeros(problem.num_jobs)
    ok = problem.row_feasible
    np.maximum.at(best, problem.row_job[ok], problem.row_value[ok])
    return best


def _order(problem: LeaseProblem, jobs: IntArray, by_density: bool) -> IntArray:
    """Guaranteed jobs first, least slack then largest; then the others by value (or by value
    per reserved GPU-lease), largest, least slack."""
    latest = np.zeros(problem.num_jobs, dtype=np.int64)
    ok = problem.row_feasible
    np.maximum.at(latest, problem.row_job[ok], problem.row_slots[ok])
    slack = latest - problem.first_slot - problem.leases
    size = problem.reserve
    best_value = best_value_per_job(problem)
    kept = jobs[problem.guaranteed[jobs]]
    new = jobs[~problem.guaranteed[jobs]]
    merit = best_value / np.maximum(size * problem.leases, 1) if by_density else best_value
    return np.concatenate(
        [
            kept[np.lexsort((-size[kept], slack[kept]))],
            new[np.lexsort((slack[new], -size[new], -merit[new]))],
        ]
    )


def latest(problem: LeaseProblem, plan: LeasePlan) -> LeasePlan | None:
    """The plan's jobs and options with every lease as late as it can go: slots filled from the
    last one back, each taking the jobs with the least room left behind it (slots between
    their first one and this one, less the leases they still need), largest first, as far as
    the slot's level rows allow. None when that leaves a job short (the caller keeps `plan`).

    Mirror image of earliest-deadline-first: with one lease size it is exact; it is what makes
    the guaranteed work due now as small as the guarantees allow."""
    jobs = np.flatnonzero(plan.admitted)
    out = LeasePlan(plan.row.copy(), np.zeros_like(plan.slots))
    if jobs.size == 0:
        return out
    need = problem.leases[jobs].copy()
    first = problem.first_slot[jobs]
    limit = problem.row_slots[plan.row[jobs]]
    size, levels = problem.reserve[jobs], problem.reserve_levels[jobs]
    for t in range(int(limit.max(initial=0)) - 1, -1, -1):
        behind = t - first + 1 - need  # slots at or before t beyond what each still needs
        if (behind[need > 0] < 0).any():
            return None
        open_ = np.flatnonzero((need > 0) & (limit > t) & (first <= t))
        room = problem.level_caps[t].copy()
        for k in open_[np.lexsort((-size[open_], behind[open_]))]:
            if (room[levels[k]] >= size[k]).all():
                room[levels[k]] -= size[k]
                out.slots[jobs[k], t] = True
                need[k] -= 1
            elif behind[k] == 0:
                return None
    return out if not need.any() else None


def keep_running(problem: LeaseProblem, plan: LeasePlan) -> LeasePlan:
    """A guaranteed job that runs now and is planned in slot 1 but not in slot 0 runs on in
    slot 0 instead of its last slot, when slot 0 has room: packed as late as they go, a job
    with one slot to spare would otherwise stop and restart every other lease, paying its
    restart each time and taking back GPUs lent in between."""
    running = np.array(sorted(problem.holdings.current), dtype=np.int64)
    if running.size == 0 or problem.horizon < 2:
        return plan
    gap = running[
        plan.slots[running, 1] & ~plan.slots[running, 0] & (problem.first_slot[running] == 0)
    ]
    if gap.size == 0:
        return plan
    plan = LeasePlan(plan.row.copy(), plan.slots.copy())
    room = plan.room(problem)
    for j in gap[np.argsort(-problem.reserve[gap], kind="stable")].tolist():
        if fits(room[:1], problem, j)[0]:
            last = problem.horizon - 1 - int(np.argmax(plan.slots[j, ::-1]))
            plan.slots[j, last], plan.slots[j, 0] = False, True
            take(room, problem, j, np.array([last]), sign=-1)
            take(room, problem, j, np.array([0]))
    return plan


def shift(problem: LeaseProblem, plan: LeasePlan, sigma: int) -> LeasePlan:
    """Apply σ without touching value: +1 moves guaranteed work into slot 0 while it has room
    (each job's latest slot moves, nearest deadline first), −1 packs every lease as late as it
    can go (`latest`), else moves work out of slot 0 into the latest later slot before the
    job's deadline with room (largest first)."""
    if sigma == 0 or not plan.admitted.any():
        return plan
    if sigma < 0:
        late = latest(problem, plan)
        if late is not None and not late.slots[:, 0].sum() > plan.slots[:, 0].sum():
            plan = late
    plan = LeasePlan(plan.row.copy(), plan.slots.copy())
    room = plan.room(problem)
    limit = np.where(plan.admitted, problem.row_slots[np.maximum(plan.row, 0)], 0)
    size = problem.reserve
    if sigma > 0:
        movable = np.flatnonzero(
            plan.slots.any(axis=1) & ~plan.slots[:, 0] & (problem.first_slot == 0)
        )
        for j in movable[np.lexsort((-size[movable], limit[movable]))]:
            if fits(room[:1], problem, j)[0]:
                last = problem.horizon - 1 - int(np.argmax(plan.slots[j, ::-1]))
                plan.slots[j, last], plan.slots[j, 0] = False, True
                take(room, problem, j, np.array([last]), sign=-1)
                take(room, problem, j, np.array([0]))
        return plan
    movable = np.flatnonzero(plan.slots[:, 0])
    for j in movable[np.lexsort((-limit[movable], -size[movable]))]:
        later = np.arange(1, limit[j])
        later = later[fits(room[later], problem, j) & ~plan.slots[j, later]]
        if later.size:
            plan.slots[j, 0], plan.slots[j, later[-1]] = False, True
            take(room, problem, j, np.array([0]), sign=-1)
            take(room, problem, j, later[-1:])
    return plan
