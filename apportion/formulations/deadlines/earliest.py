"""The earliest deadline a rejected SLO job could be guaranteed now (read only by explanations).

Every other decision is fixed: each job in `keep` keeps the option it was given (its M_i, capped
at the plan's horizon as in the solve) and every other job stays out. Job j with one option of
M usable slots is then admissible exactly when the lease MILP of `lease_milp` over keep ∪ {j},
with every `choose` row = 1, is feasible. Feasibility is monotone in M (a later deadline only
adds slots), so the smallest M is found by bisection between

    lo = first_j + L_j                       (alone: fewer slots cannot hold L_j leases)
    hi = the L_j-th slot with room for j in the returned plan, + 1    (that plan exists)

one feasibility MILP per step. Cheap proofs narrow the range first: a greedy packing found at
some M proves M admits j (a bisection on them lowers hi), and an infeasible LP relaxation at M
proves it does not (LP feasibility is monotone too: a bisection on it raises lo). When the
time budget runs out, the bounds proven so far are the answer. Slots past the plan's horizon,
up to `horizon_slots`, count: only j may use them. The deadline is lease_start + M ℓ, the first
time with ⌊(d − lease_start)/ℓ⌋ = M; a holder that ends within its hold needs no slot and meets
any deadline from its end on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.deadlines.lease_milp import build
from apportion.formulations.deadlines.lease_plan import (
    LeasePlan,
    fits,
    greedy_plan,
    plan_violations,
)
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.context import SolveContext
from apportion.solver.status import Status

IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]


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
    if ctx.solve(lease.model, relax=True).status is Status.INFEASIBLE:
        return False
    if proof is Proof.RELAXATION or ctx.budget.spent():
        return None
    solution = ctx.solve(lease.model)
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
    bounds first (greedy packings from above, LP relaxations from below), then MILPs between
    them; the bounds proven so far when the budget runs out."""
    keep = plan.admitted.copy()
    keep[j] = False
    low = int(problem.first_slot[j] + problem.leases[j])
    if np.isfinite(problem.done_by[j]) or problem.leases[j] == 0:
        return Earliest(low, True, low, horizon, low)
    if low > horizon:
        return Earliest(None, True, None, horizon, low)
    high = fits_by(room_left(problem, plan, keep, horizon), problem, j)
    if high is None:
        answer = check(problem, plan, keep, j, horizon, ctx, horizon)
        if not answer:
            return Earliest(None, answer is not None, None, horizon, low)
        high = horizon

    def test(proof: Proof) -> Callable[[int], bool | None]:
        return lambda slots: check(problem, plan, keep, j, slots, ctx, horizon, proof)

    # A greedy "no" and an LP "yes" prove nothing: each only moves its own bound.
    high = bisect(low, high, lambda m: test(Proof.GREEDY)(m) is True)[1]
    low = bisect(low, high, lambda m: test(Proof.RELAXATION)(m) is not False)[0]
    low, high, done = bisect(low, high, test(Proof.MILP))
    return Earliest(high if done else None, done, high, horizon, low)


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
