"""The lease MILP of FORMULATIONS §6, aggregated per job.

For SLO jobs j with remaining leases L_j, reserved size r_j = RU(g_j), feasible options v
(M_{j,v} ≥ L_j, value w_{j,v}) and T_j = max_v M_{j,v}:

    maximize    Σ_{j,v} w_{j,v} s_{j,v}
    subject to  Σ_{t<T_j} x_{j,t} = L_j Σ_v s_{j,v}           ∀j     (total)
                Σ_{t<M_{j,v}} x_{j,t} ≥ L_j s_{j,v}            ∀j,v with M_{j,v} < T_j (deadline)
                Σ_v s_{j,v} = 1  (guaranteed j),  ≤ 1 (others)   ∀j     (choose)
                Σ_j r_j x_{j,t} ≤ C                             ∀t     (capacity)
                Σ_{j,v} r_j clip(L_j − M_{j,v} + m, 0, L_j) s_{j,v} ≤ C m
                                                   ∀ distinct deadlines m (energy)
                x, s ∈ {0, 1}

Slot variables are per job, not per (job, option) row as in the paper: once option v is chosen the
job's L_j slots all lie before M_{j,v} (the total row caps them at L_j, the deadline row puts L_j
of them before M_{j,v}), so one set of x serves every option and soft jobs cost no extra binaries.
x_{j,t} exists only for t < T_j. The energy rows are implied at integer points (an option met by
slot M needs L − (M − m) leases before any m) but are knapsacks in s alone: the solver derives
cover cuts from them, and they close most of the relaxation's gap (the `deadlines` bench rows).

σ (run guaranteed work early or late) is not a term of this objective, unlike the paper's
σ Σ (r_i/C) x_{i,0}: any weight on it trades value for slot-0 usage whenever two admission choices
differ by less than the weight (a weight of half the smallest value drops two 6-value jobs for
one 10-value job). It is applied afterwards, value first (`lease_plan.shift`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.deadlines.lease_plan import LeasePlan, best_value_per_job, pack
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model, Sense, Take

#: HiGHS search settings for every lease MILP. HiGHS 1.15 restarts its search once the root has
#: fixed enough columns; on these models the restarted presolve can discard every solution better
#: than the incumbent and then call the incumbent optimal: two identical guaranteed jobs answered
#: 40.01 "optimal" where 42.01 is feasible, at gap 0 (`tests/formulations/deadlines/data`). It
#: happened only with value weights a rounding away from a short decimal (8.01/10) and never
#: without the restart; without it the answers on the 100-job bench snapshots were as good, as
#: fast. A search setting only: it does not change what counts as optimal.
MILP_TUNING = {"highs": {"mip_allow_restart": False}}
#: At most this many energy rows (they are dense: one coefficient per option row).
MAX_ENERGY_ROWS = 96
#: Repacks of the LP-guided greedy with the guaranteed jobs it dropped moved to the front.
GUIDED_RETRIES = 3


@dataclass(frozen=True)
class LeaseModel:
    """The model and how its columns map back to jobs, slots and option rows."""

    model: Model
    x: Block
    s: Block
    x_job: IntArray  # job (problem index) of each x column
    x_slot: IntArray  # slot of each x column
    rows: IntArray  # option row (problem index) of each s column
    row_job: IntArray  # job (problem index) of each s column
    cost: FloatArray  # objective coefficients, x columns then s columns

    def objective(self, plan: LeasePlan) -> float:
        return float(self.cost @ self.start(plan))

    def start(self, plan: LeasePlan) -> FloatArray:
        """A plan as a column vector (the MILP's starting point)."""
        point = np.zeros(self.model.num_cols)
        point[self.x.span] = plan.slots[self.x_job, self.x_slot]
        point[self.s.span] = plan.row[self.row_job] == self.rows
        return point

    def plan(self, problem: LeaseProblem, values: FloatArray) -> LeasePlan:
        """Round a solution and read it back as a plan."""
        plan = LeasePlan.empty(problem)
        on = values[self.x.span] > 0.5
        plan.slots[self.x_job[on], self.x_slot[on]] = True
        chosen = values[self.s.span] > 0.5
        plan.row[self.row_job[chosen]] = self.rows[chosen]
        return plan

    def guided_plan(self, problem: LeaseProblem, relaxed: FloatArray) -> tuple[LeasePlan, IntArray]:
        """Round the LP relaxation greedily: guaranteed jobs first, then by Σ_v s_{j,v} (ties by
        value per GPU-lease); each job's options by s, its slots by x: more value than the
        value-ordered greedy, and a far better MILP start."""
        s = relaxed[self.s.span]
        weight = np.zeros(problem.num_jobs)
        np.add.at(weight, self.row_job, s)
        option_score = np.zeros(problem.row_job.size)
        option_score[self.rows] = s
        option_rank = np.lexsort((-problem.row_value, -option_score)).argsort()
        slot_score = np.zeros((problem.num_jobs, problem.horizon))
        slot_score[self.x_job, self.x_slot] = relaxed[self.x.span]
        jobs = np.unique(self.row_job)
        density = best_value_per_job(problem) / np.maximum(problem.reserve * problem.leases, 1)
        order = jobs[np.lexsort((-density[jobs], -weight[jobs], ~problem.guaranteed[jobs]))]
        plan, lost = pack(problem, order, option_rank, slot_score)
        for _ in range(GUIDED_RETRIES):
            if lost.size == 0:
                break
            # A guarantee the LP's slot choices crowded out goes first next time.
            order = np.concatenate([lost, order[~np.isin(order, lost)]])
            plan, lost = pack(problem, order, option_rank, slot_score)
        return plan, lost


def spans(lengths: IntArray) -> tuple[IntArray, IntArray]:
    """Owner and position of each element of consecutive ranges of the given lengths."""
    owner = np.repeat(np.arange(lengths.size), lengths)
    starts = np.cumsum(lengths) - lengths
    return owner, np.arange(int(lengths.sum())) - np.repeat(starts, lengths)


def build(
    problem: LeaseProblem,
    jobs: IntArray,
    x_upper: FloatArray | None = None,
    soft_guarantees: bool = False,
) -> LeaseModel:
    """The MILP over `jobs` (sorted SLO jobs with a feasible option), block by block; `x_upper`
    restricts slot variables (0 = not allowed) for a sub-MILP with the same columns;
    `soft_guarantees` lets guaranteed jobs go unchosen (see `guarantees`)."""
    rows = np.flatnonzero(problem.row_feasible & np.isin(problem.row_job, jobs))
    local = np.searchsorted(jobs, problem.row_job[rows])  # jobs is sorted
    reach = np.zeros(jobs.size, dtype=np.int64)
    np.maximum.at(reach, local, problem.row_slots[rows])
    first = problem.first_slot[jobs]
    reach = np.where(problem.leases[jobs] == 0, first, np.maximum(reach, first))
    x_owner, x_offset = spans(reach - first)
    x_slot = first[x_owner] + x_offset
    x_job = jobs[x_owner]
    ids = problem.job_ids
    model = Model("lease_admission")
    x = model.add_variables(
        "x",
        x_owner.size,
        upper=1.0 if x_upper is None else x_upper,
        integer=True,
        coords=(("job", Take(ids, x_job)), ("slot", Take(range(problem.horizon), x_slot))),
    )
    s = model.add_variables(
        "s",
        rows.size,
        upper=1.0,
        integer=True,
        coords=(
            ("job", Take(ids, problem.row_job[rows])),
            ("option", problem.row_option[rows].tolist()),
        ),
    )
    n, nx, ns = jobs.size, x.size, s.size
    need = problem.leases[jobs]
    ones_x = sp.csr_matrix((np.ones(nx), (x_owner, np.arange(nx))), shape=(n, nx))
    minus_l = sp.csr_matrix((-need[local].astype(float), (local, np.arange(ns))), shape=(n, ns))
    job_coords = (("job", Take(ids, jobs)),)
    model.add_constraints("total", {x: ones_x, s: minus_l}, lower=0.0, upper=0.0, coords=job_coords)
    _add_deadline_rows(model, problem, x, s, rows, local, reach, ids)
    _add_energy_rows(model, problem, s, rows)
    guaranteed = np.zeros(n) if soft_guarantees else problem.guaranteed[jobs].astype(float)
    choose = sp.csr_matrix((np.ones(ns), (local, np.arange(ns))), shape=(n, ns))
    model.add_constraints("choose", {s: choose}, lower=guaranteed, upper=1.0, coords=job_coords)
    _add_capacity_rows(model, problem, x, x_job, x_slot)
    # In units of the largest value: the solver's tolerances are absolute, and values at the
    # ends of the snapshot's range (1e-12 … 1e15) would otherwise blur the optimum.
    weight = problem.row_value[rows] / max(
        float(np.abs(problem.row_value[rows]).max(initial=0)), 1e-300
    )
    model.set_objective({s: weight}, Sense.MAXIMIZE)
    cost = np.concatenate([np.zeros(nx), weight])
    return LeaseModel(model, x, s, x_job, x_slot, rows, problem.row_job[rows], cost)


def _add_deadline_rows(
    model: Model,
    problem: LeaseProblem,
    x: Block,
    s: Block,
    rows: IntArray,
    local: IntArray,
    reach: IntArray,
    ids: list[str],
) -> None:
    """Σ_{t<M_i} x_{j,t} ≥ L_j s_i for options that end before the job's last usable slot."""
    # A job with nothing left to run (a holder ending in its hold) has no slots to count.
    binding = np.flatnonzero(
        (problem.row_slots[rows] < reach[local]) & (problem.leases[problem.row_job[rows]] > 0)
    )
    if binding.size == 0:
        return
    # x columns of job `local` start at its first slot; the row counts slots first … M_i − 1.
    first = problem.first_slot[problem.row_job[rows]]
    lengths = np.zeros(reach.size, dtype=np.int64)
    lengths[local] = reach[local] - first
    first_x = np.cumsum(lengths) - lengths
    owner, position = spans(problem.row_slots[rows[binding]] - first[binding])
    cols = first_x[local[binding]][owner] + position
    k = binding.size
    lhs_x = sp.csr_matrix((np.ones(cols.size), (owner, cols)), shape=(k, x.size))
    need = problem.leases[problem.row_job[rows[binding]]].astype(float)
    lhs_s = sp.csr_matrix((-need, (np.arange(k), binding)), shape=(k, s.size))
    model.add_constraints(
        "deadline",
        {x: lhs_x, s: lhs_s},
        lower=0.0,
        coords=(
            ("job", Take(ids, problem.row_job[rows[binding]])),
            ("option", problem.row_option[rows[binding]].tolist()),
        ),
    )


def _add_energy_rows(model: Model, problem: LeaseProblem, s: Block, rows: IntArray) -> None:
    """Σ_i r_j clip(L_j − M_i + m, 0, L_j) s_i ≤ Σ_{t<m} C_t for each distinct deadline m: a
    job meeting option i runs at least L_j − (M_i − m) of its leases before slot m. Implied by
    the slot rows for integer points, but a knapsack in s alone, which the solver turns into
    cover cuts."""
    marks = np.unique(problem.row_slots[rows])
    marks = marks[marks > 0]
    if marks.size > MAX_ENERGY_ROWS:
        # Any subset of the rows is valid; evenly spread ones keep the matrix small.
        marks = marks[np.linspace(0, marks.size - 1, MAX_ENERGY_ROWS).round().astype(int)]
    if marks.size == 0:
        return
    need = problem.leases[problem.row_job[rows]][None, :]
    before = np.clip(need - problem.row_slots[rows][None, :] + marks[:, None], 0, need)
    coef = before * problem.reserve[problem.row_job[rows]][None, :]
    room = np.concatenate([[0], np.cumsum(problem.level_caps[:, 0])])  # GPU-leases before m
    model.add_constraints(
        "energy",
        {s: sp.csr_matrix(coef.astype(float))},
        upper=room[marks].astype(float),
        coords=(("slot", marks.tolist()),),
    )


def _add_capacity_rows(
    model: Model, problem: LeaseProblem, x: Block, x_job: IntArray, x_slot: IntArray
) -> None:
    """Σ_j r_j x_{j,t} ≤ C_t per slot, and in slots with held GPUs one row per chain size s
    that binds harder, Σ_{r_j ≥ s} r_j x_{j,t} ≤ s Σ_n ⌊f_n/s⌋ (`grid`): what the holders leave
    free then still takes every reservation consolidated."""
    nx = x.size
    size = problem.reserve[x_job].astype(float)
    per_slot = sp.csr_matrix((size, (x_slot, np.arange(nx))), shape=(problem.horizon, nx))
    caps = problem.level_caps
    model.add_constraints(
        "capacity",
        {x: per_slot},
        upper=caps[:, 0].astype(float),
        coords=(("slot", range(problem.horizon)),),
    )
    slot, level = np.nonzero(caps[:, 1:] < caps[:, :1])
    if slot.size == 0:
        return
    level += 1
    on = problem.reserve_levels[x_job][:, level].T & (x_slot[None, :] == slot[:, None])
    r, c = np.nonzero(on)
    model.add_constraints(
        "capacity_level",
        {x: sp.csr_matrix((size[c], (r, c)), shape=(slot.size, nx))},
        upper=caps[slot, level].astype(float),
        coords=(
            ("slot_size", [f"{t}/{problem.ladder[k]}" for t, k in zip(slot, level, strict=True)]),
        ),
    )
