"""The earliest deadline a rejected SLO job could be guaranteed now (read only by explanations).

Every other decision is fixed: each job in `keep` keeps the option it was given (its M_i, capped
at the plan's horizon as in the solve) and every other job stays out. Job j with one option of
M usable slots is then admissible exactly when the lease MILP of `lease_milp` over keep ∪ {j},
with every `choose` row = 1, is feasible. Feasibility is monotone in M (a later deadline only
adds slots), so the smallest M is found by bisection between

    lo = first_j + L_j                       (alone: fewer slots cannot hold L_j leases)
    hi = the L_j-th slot with room for j in the returned plan, + 1    (that plan exists)

one feasibility MILP per step. Cheap proofs narrow the range first (`bounds`): the returned
plan repaired to take j by M proves M admits j (a bisection on repairs lowers hi); an interval
that needs more GPU-leases than it has, or an infeasible LP relaxation, at M proves it does not
(both are monotone: bisections on them raise lo). When the time budget runs out, the bounds
proven so far are the answer. Slots past the plan's horizon,
up to `horizon_slots`, count: only j may use them. The deadline is lease_start + M ℓ, the first
time with ⌊(d − lease_start)/ℓ⌋ = M; a holder that ends within its hold needs no slot and meets
any deadline from its end on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np

from apportion.formulations.deadlines.bounds import energy_admits, packed_late, repair
from apportion.formulations.deadlines.lease_milp import MILP_TUNING, build
from apportion.formulations.deadlines.lease_plan import (
    LeasePlan,
    fits,
    greedy_plan,
    latest,
    plan_violations,
)
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import BoolArray, IntArray
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.status import Status


class Proof(Enum):
    """How far `check` may go to decide."""

    GREEDY = 1
    RELAXATION = 2
    MILP = 3


@dataclass(frozen=True)
class Earliest:
    """`slots`: the smallest M that admits the job (None: none within `horizon`, or not
    computed); `upper` an M known to admit it and `lower` one below which none does."""

    slots: int | None
    computed: bool
    upper: int | None = None
    horizon: int = 0
    lower: int = 0

    def deadline(self, problem: LeaseProblem, j: int) -> float | None:
        if np.isfinite(problem.done_by[j]):
            return float(problem.done_by[j])
        return None if self.slots is None else problem.lease_start + self.slots * problem.lease


def fixed(
    problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, j: int, slots: int, horizon: int
) -> tuple[LeaseProblem, IntArray]:
    """The problem with one option row per kept job (its chosen one) and one for j (M = slots),
    all of them guaranteed, over `horizon` slots; and the jobs of its MILP."""
    kept = np.flatnonzero(keep & plan.admitted)
    kept = kept[kept != j]
    rows = plan.row[kept]
    jobs = np.append(kept, j)
    guaranteed = np.zeros(problem.num_jobs, dtype=bool)
    guaranteed[jobs] = True
    narrowed = replace(
        problem,
        horizon=horizon,
        guaranteed=guaranteed,
        row_job=jobs,
        row_option=np.append(problem.row_option[rows], 0),
        row_time=np.append(problem.row_time[rows], problem.lease_start + slots * problem.lease),
        row_value=np.append(problem.row_value[rows], 1.0),
        row_slots_raw=np.append(np.minimum(problem.row_slots_raw[rows], problem.horizon), slots),
        row_kept=np.ones(jobs.size, dtype=bool),
    )
    return narrowed, np.sort(jobs)


def check(
    problem: LeaseProblem,
    plan: LeasePlan,
    keep: BoolArray,
    j: int,
    slots: int,
    ctx: SolveContext,
    horizon: int | None = None,
    proof: Proof = Proof.MILP,
) -> bool | None:
    """Whether j fits by M = `slots` next to the kept jobs: a greedy packing proves yes, the LP
    relaxation's infeasibility proves no, the MILP decides (up to `proof`); None: undecided."""
    narrowed, jobs = fixed(problem, plan, keep, j, slots, horizon or problem.horizon)
    if not narrowed.row_feasible[-1]:
        return False
    if ctx.budget.spent():
        return None
    packed, lost = greedy_plan(narrowed, jobs)
    if lost.size == 0 and not plan_violations(narrowed, packed):
        return True
    if proof is Proof.GREEDY or ctx.budget.spent():
        return None
    lease = build(narrowed, jobs)
    if ctx.solve(SolveRequest(lease.model, relax=True)).status is Status.INFEASIBLE:
        return False
    if proof is Proof.RELAXATION or ctx.budget.spent():
        return None
    solution = ctx.solve(SolveRequest(lease.model, tuning=MILP_TUNING))
    if solution.status is Status.INFEASIBLE:
        return False
    if solution.status.has_solution:
        return not plan_violations(narrowed, lease.plan(narrowed, solution.x))
    return None


def room_left(problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, horizon: int) -> IntArray:
    """(slot, chain size) room over `horizon` slots with only the kept jobs' reservations."""
    wide = replace(problem, horizon=horizon)
    slots = np.zeros((problem.num_jobs, horizon), dtype=np.int64)
    slots[:, : problem.horizon] = plan.slots & keep[:, None]
    sized = problem.reserve[:, None] * problem.reserve_levels
    room: IntArray = wide.level_caps - slots.T @ sized
    return room


def fits_by(room: IntArray, problem: LeaseProblem, j: int) -> int | None:
    """The smallest M with L_j slots in [first_j, M) that have room for j (None: too few)."""
    need, first = int(problem.leases[j]), int(problem.first_slot[j])
    if need == 0:
        return first
    open_slots = np.flatnonzero(fits(room, problem, j))
    open_slots = open_slots[open_slots >= first]
    return int(open_slots[need - 1]) + 1 if open_slots.size >= need else None


def earliest(
    problem: LeaseProblem, plan: LeasePlan, j: int, horizon: int, ctx: SolveContext
) -> Earliest:
    """The smallest M at which j would be admitted with every other decision kept: cheap
    bounds first (packing late and repairing the returned plan, from above; interval energy
    and LP relaxations, from below, `bounds`), then MILPs between them; the bounds proven so
    far when the budget runs out."""
    keep = plan.admitted.copy()
    keep[j] = False
    low = int(problem.first_slot[j] + problem.leases[j])
    if np.isfinite(problem.done_by[j]) or problem.leases[j] == 0:
        return Earliest(low, True, low, horizon, low)
    if low > horizon:
        return Earliest(None, True, None, horizon, low)
    return _Search(problem, plan, keep, j, horizon, ctx).run(low)


class _Search:
    """One job's search, every step within what is left of the budget."""

    def __init__(
        self,
        problem: LeaseProblem,
        plan: LeasePlan,
        keep: BoolArray,
        j: int,
        horizon: int,
        ctx: SolveContext,
    ) -> None:
        self.problem, self.plan, self.keep, self.j = problem, plan, keep, j
        self.horizon, self.ctx = horizon, ctx

    def late(self, slots: int) -> bool | None:
        if self.ctx.budget.spent():
            return None
        p = self.problem
        return late_plan(p, self.plan, self.keep, self.j, slots, self.horizon) is not None

    def repaired(self, slots: int) -> bool | None:
        if self.ctx.budget.spent():
            return None
        p = self.problem
        return repaired_plan(p, self.plan, self.keep, self.j, slots, self.horizon) is not None

    def energy(self, slots: int) -> bool:
        return energy_admits(self.problem, self.plan, self.keep, self.j, slots, self.horizon)

    def proof(self, proof: Proof) -> Callable[[int], bool | None]:
        p, plan, keep, j, ctx = self.problem, self.plan, self.keep, self.j, self.ctx
        return lambda slots: check(p, plan, keep, j, slots, ctx, self.horizon, proof)

    def upper(self) -> tuple[int | None, bool]:
        """An M known to admit j: the L_j-th slot with room, in the returned plan or with the
        kept jobs packed late, else the horizon if a repair or a MILP says so; None when
        nothing within the horizon does, with whether that is decided."""
        p, j = self.problem, self.j
        high = fits_by(room_left(p, self.plan, self.keep, self.horizon), p, j)
        # Repairs start from the kept jobs packed late when that frees more early room.
        late = kept_late(p, self.plan, self.keep, self.horizon)
        by = fits_by(room_left(p, late, self.keep, self.horizon), p, j)
        if by is not None and (high is None or by < high):
            high, self.plan = by, late
        if high is not None or self.repaired(self.horizon):
            return high or self.horizon, True
        answer = self.proof(Proof.MILP)(self.horizon)
        return (self.horizon if answer else None), answer is not None

    def run(self, low: int) -> Earliest:
        if self.late(low):
            return Earliest(low, True, low, self.horizon, low)  # the least it could need
        high, decided = self.upper()
        if high is None:
            return Earliest(None, decided, None, self.horizon, low)
        # A failed repair and an LP "yes" prove nothing: each only moves its own bound.
        high = bisect(low, high, self.repaired)[1]
        high = bisect(low, high, self.late)[1]
        low = bisect(low, high, self.energy)[0]
        low = bisect(low, high, lambda m: self.proof(Proof.RELAXATION)(m) is not False)[0]
        low, high, done = bisect(low, high, self.proof(Proof.MILP))
        return Earliest(high if done else None, done, high, self.horizon, low)


def kept_late(problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, horizon: int) -> LeasePlan:
    """The kept jobs' leases packed as late as they go over `horizon` slots (the returned plan
    when that fails): the early slots it frees bound j from above."""
    wide = replace(problem, horizon=horizon)
    kept = LeasePlan(np.where(keep, plan.row, -1), np.zeros((problem.num_jobs, horizon), bool))
    late = latest(wide, kept)
    if late is None or plan_violations(wide, late):
        return plan
    return LeasePlan(late.row, late.slots[:, : problem.horizon])


def late_plan(
    problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, j: int, slots: int, horizon: int
) -> LeasePlan | None:
    """Every kept job at its option and j due by `slots`, packed as late as they go
    (`bounds.packed_late`) and checked rule by rule (None: it failed)."""
    narrowed, jobs = fixed(problem, plan, keep, j, slots, horizon)
    if not narrowed.row_feasible[-1]:
        return None
    late = packed_late(narrowed, jobs)
    return None if late is None or plan_violations(narrowed, late) else late


def repaired_plan(
    problem: LeaseProblem, plan: LeasePlan, keep: BoolArray, j: int, slots: int, horizon: int
) -> LeasePlan | None:
    """`bounds.repair`'s plan with j due by `slots`, checked rule by rule on the problem of
    the kept options (None: no repair, or a flawed one)."""
    fixed_plan = repair(problem, plan, keep, j, slots, horizon)
    if fixed_plan is None:
        return None
    narrowed, _ = fixed(problem, plan, keep, j, slots, horizon)
    rows = LeasePlan(np.full(problem.num_jobs, -1, dtype=np.int64), fixed_plan.slots)
    rows.row[narrowed.row_job] = np.arange(narrowed.row_job.size)
    return None if plan_violations(narrowed, rows) else fixed_plan


def bisect(low: int, high: int, test: Callable[[int], bool | None]) -> tuple[int, int, bool]:
    """Narrow [low, high] (high admits) to the smallest M that `test` admits; stops early, with
    the bounds so far and False, when `test` cannot tell."""
    while low < high:
        middle = (low + high) // 2
        answer = test(middle)
        if answer is None:
            return low, high, False
        low, high = (low, middle) if answer else (middle + 1, high)
    return low, high, True
