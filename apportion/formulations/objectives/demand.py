"""Allocation LPs with a throughput demand per job, solved over groups of similar jobs.

The makespan, finish-time-fairness and SLO-cost policies share one LP (FORMULATIONS §2–4):

    eff_j(X) = Σ_k T_jk X_jk ≥ a_j + b_j θ      ∀j   (demand, affine in one scalar θ)
    Σ_k X_jk ≤ 1                                ∀j   (time)
    Σ_j s_j X_jk ≤ N_k                           ∀k   (capacity)
    X_jk ≥ 0 where job j can run on k, absent elsewhere
    optimize θ within bounds (maximize or minimize), or minimize Σ_k c_k Σ_j s_j X_jk,
    or maximize Σ_jk v_jk X_jk (v equal within a class); with θ, optionally then, θ held at its
    optimum, maximize Σ_jk v_jk X_jk (a second stage, on the same session when kept warm)

It is solved over groups g (see `demand_groups`) with aggregate time Y_gk = Σ_{j∈g} X_jk:

    Σ_k T_gk Y_gk − (Σ_{j∈g} b_j) θ ≥ Σ_{j∈g} a_j,   Σ_k Y_gk ≤ n_g,   Σ_g s_g Y_gk ≤ N_k.

These rows are sums of true rows, so the grouped LP is a relaxation for any grouping, and it is
exact once every group's demands at the optimal θ share an interval. The loop solves, splits the
groups that straddle an interval end, and solves again until none does (groups only get finer, so
it ends; at worst every job is alone). Members then get their exact share of their group's Y (and,
under a value objective, of the time it holds beyond their demands, by their spare time).

Rows are scaled so their coefficients are at most 1, but a job whose demand is a tiny fraction of
what it could do (34 steps left at 9,745 steps/s over a 2e7 s makespan: 1.6e-10 of its time)
still has a θ coefficient below what a solver keeps, and may come back with no time. Such jobs
get the missing time afterwards (`lift`): it is of the order of the solver's tolerance, so
nobody else loses more than round-off, and the policies certify the result against the bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from apportion.formulations.allocation import Allocation, add_allocation
from apportion.formulations.objectives.demand_groups import (
    inconsistent_groups,
    interval_ids,
    job_classes,
    refine,
    split_groups,
)
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import RecordedSession, SolveContext, SolveRequest
from apportion.solver.model import Block, Model, Sense
from apportion.solver.status import Status

# HiGHS's simplex wins on small grouped models (an exact vertex), an interior point on large
# ungrouped ones, where the simplex's iteration count grows with the jobs (the `objectives`
# bench's makespan rows).
SIMPLEX_MAX_VARIABLES = 1_500
SPLIT_ROUNDS = 6
#: A second stage after an interior-point first one holds θ this far (relative) short of θ*: an
#: interior point meets its rows only to its tolerance, so demands exactly at its optimum can
#: read as infeasible. A simplex vertex meets them exactly, and the second stage holds θ*.
INTERIOR_SLACK = 1e-7


@dataclass(frozen=True)
class DemandJobs:
    """The jobs taking part (all must be able to run somewhere) and their demands a_j + b_j θ."""

    throughput: FloatArray  # (m, K): T_jk where the job can run, 0 elsewhere
    scale: FloatArray  # s_j
    capacity: FloatArray  # N_k
    offset: FloatArray  # a_j
    slope: FloatArray  # b_j
    labels: Sequence[str]
    gpu_names: list[str]

    def demand(self, theta: float | None) -> FloatArray:
        return self.offset if theta is None else self.offset + self.slope * theta


@dataclass(frozen=True)
class Target:
    """θ to maximize or minimize within bounds, or (no θ) the price of the GPUs used or the
    value of the time given; with θ, `then_value` is maximized at θ's optimum."""

    sense: Sense
    theta_bounds: tuple[float, float] | None = None
    gpu_price: FloatArray | None = None  # c_k per GPU and unit of time
    value: FloatArray | None = None  # v_jk per unit of time (m × K), equal within a class
    then_value: FloatArray | None = None  # the same, for the second stage of a θ target


@dataclass
class DemandResult:
    status: Status
    allocation: FloatArray  # (m, K)
    theta: float | None
    bound: float | None  # the LP optimum: θ, or the minimum price
    group: IntArray  # group id per job, reusable as the next call's starting grouping
    num_groups: int
    rounds: int
    second: Status | None = None  # how the `then_value` stage ended, if there was one
    solution: Solution | None = None  # the LP whose answer this is: its termination, its detail


def initial_groups(jobs: DemandJobs, merge: bool, theta: float | None) -> IntArray:
    """Classes split by the demand interval at a first guess of θ."""
    classes = job_classes(jobs.throughput, jobs.scale, merge)
    low, _ = interval_ids(jobs.throughput, jobs.demand(theta))
    return refine(classes, low)


def solve_demand_lp(
    jobs: DemandJobs, target: Target, ctx: SolveContext, group: IntArray
) -> DemandResult:
    """Solve, refine the grouping until it is exact, and split every group back into jobs."""
    rounds = 0
    warm = target.then_value is not None
    while True:
        rounds += 1
        size = int(group.max()) + 1 if group.size else 0
        model, x, theta_block = build(jobs, target, group, size)
        method = LpMethod.SIMPLEX if x.block.size <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
        kept = _open(model, ctx, method) if warm else None
        solution = ctx.solve(SolveRequest(model, method)) if kept is None else kept.solve()
        if not solution.status.has_solution:
            empty = np.zeros_like(jobs.throughput)
            return DemandResult(
                solution.status, empty, None, None, group, size, rounds, solution=solution
            )
        theta = None if theta_block is None else float(solution.value(theta_block)[0])
        low, high = interval_ids(jobs.throughput, jobs.demand(theta))
        bad = inconsistent_groups(group, low, high, size)
        if not bad.any():
            break
        # Each round splits every straddling group, so this ends; past a few rounds, split them
        # into single jobs outright rather than chase a drifting θ group by group.
        key = low if rounds < SPLIT_ROUNDS else np.arange(group.size, dtype=np.int64)
        group = refine(group, key, bad)
    bound = theta if theta is not None else solution.objective
    second = None
    if target.then_value is not None and theta_block is not None and theta is not None:
        then = Then(jobs, target, group, size, x, theta_block, theta)
        later = then.solve(ctx, kept, ctx.settings(method).lp_method)
        second = later.status
        solution = later if later.status is Status.OPTIMAL else solution
    # Time above the demands is the point of a value objective: members keep it.
    surplus = target.value is not None or second is Status.OPTIMAL
    allocation = members(jobs, group, x.dense(solution.value(x.block)), theta, surplus)
    return DemandResult(
        solution.status, allocation, theta, bound, group, size, rounds, second, solution
    )


def _open(model: Model, ctx: SolveContext, method: LpMethod) -> RecordedSession | None:
    """A session for a model solved by the simplex (an interior point has no vertex to go on
    from, and its preferred backend may keep none)."""
    if ctx.settings(method).lp_method is not LpMethod.SIMPLEX:
        return None
    return ctx.session(model, method)


@dataclass(frozen=True)
class Then:
    """The second stage of a θ target: θ held at its optimum θ*, Σ_jk v_jk X_jk maximized over
    the same groups (exact: their demands at θ* share an interval)."""

    jobs: DemandJobs
    target: Target
    group: IntArray
    size: int
    x: Allocation
    theta_block: Block
    theta: float

    def solve(self, ctx: SolveContext, kept: RecordedSession | None, method: LpMethod) -> Solution:
        """On the first stage's session when it has one: θ fixed where it is, the costs
        changed, and the primal simplex goes on from the first vertex. Otherwise a model of its
        own, θ fixed at θ* after a simplex first stage (its vertex meets the demands exactly)
        or `INTERIOR_SLACK` below after an interior point."""
        if kept is not None:
            theta = np.array([self.theta])
            kept.change_col_bounds(np.array([self.theta_block.start]), theta, theta)
            block = self.x.block
            columns = np.r_[
                np.arange(block.start, block.start + block.size), self.theta_block.start
            ]
            kept.change_col_costs(columns, np.r_[self._costs(), 0.0])
            if ctx.options.solver is None:
                kept.keep_point(primal=True)
            return kept.solve()
        # Short of θ* is toward the demands' easy side: below a maximum, above a minimum.
        slack = 0.0 if method is LpMethod.SIMPLEX else INTERIOR_SLACK
        side = -1.0 if self.target.sense is Sense.MAXIMIZE else 1.0
        fixed = self.theta * (1.0 + side * slack)
        value = self._value()
        then = Target(Sense.MAXIMIZE, theta_bounds=(fixed, fixed), value=value)
        model, _, _ = build(self.jobs, then, self.group, self.size)
        # The second stage, not the policy's own model.
        return ctx.solve(SolveRequest(model, method, auxiliary=True))

    def _value(self) -> FloatArray:
        assert self.target.then_value is not None, "a second stage has a value to maximize"
        return self.target.then_value

    def _costs(self) -> FloatArray:
        _, first = np.unique(self.group, return_index=True)
        return _value_costs(self._value()[first], self.x)


def _value_costs(value: FloatArray, x: Allocation) -> FloatArray:
    """v per column, in units of the largest, as for prices: the solver reads costs against its
    tolerances."""
    cost = value[x.group, x.gpu]
    out: FloatArray = cost / max(float(np.max(cost, initial=0.0)), 1e-300)
    return out


def build(
    jobs: DemandJobs, target: Target, group: IntArray, size: int
) -> tuple[Model, Allocation, Block | None]:
    """The grouped LP; rows scaled so coefficients are O(1) whatever the units."""
    _, first, count = np.unique(group, return_index=True, return_counts=True)
    n = count.astype(float)
    t_rep = jobs.throughput[first]
    scale = jobs.scale[first]
    labels = [jobs.labels[j] for j in first]
    model = Model("demand")
    x = add_allocation(model, t_rep > 0, labels, jobs.gpu_names)
    theta = None
    if target.theta_bounds is not None:
        lower, upper = target.theta_bounds
        theta = model.add_variables("theta", 1, lower=lower, upper=upper)
    norm = n * t_rep.max(axis=1)
    a_sum = np.bincount(group, weights=jobs.offset, minlength=size)
    demand_terms = {x.block: x.per_group(t_rep[x.group, x.gpu] / norm[x.group])}
    if theta is not None:
        b_sum = np.bincount(group, weights=jobs.slope, minlength=size)
        demand_terms[theta] = (-b_sum / norm)[:, None]
    coords = (("job", labels),)
    model.add_constraints("demand", demand_terms, lower=a_sum / norm, coords=coords)
    model.add_constraints(
        "time", {x.block: x.per_group(1.0 / n[x.group])}, upper=1.0, coords=coords
    )
    model.add_constraints(
        "capacity",
        {x.block: x.per_type(scale[x.group] / jobs.capacity[x.gpu])},
        upper=1.0,
        coords=(("gpu", jobs.gpu_names),),
    )
    if target.value is not None:
        model.set_objective({x.block: _value_costs(target.value[first], x)}, target.sense)
    elif theta is not None:
        model.set_objective({theta: 1.0}, target.sense)
    else:
        assert target.gpu_price is not None, "a target without θ minimizes the GPUs' price"
        # Prices in units of the dearest one: at 1e-12 per hour every cost would sit below the
        # solver's optimality tolerance and any feasible allocation would pass as cheapest.
        price = target.gpu_price / max(float(np.max(target.gpu_price, initial=0.0)), 1e-300)
        model.set_objective({x.block: price[x.gpu] * scale[x.group]}, target.sense)
    return model, x, theta


def lift(jobs: DemandJobs, allocation: FloatArray, theta: float | None) -> FloatArray:
    """Give each job left short of its demand the missing time on its fastest type, then scale
    back rows over all the time and types over capacity."""
    demand = jobs.demand(theta)
    eff = np.einsum("jk,jk->j", jobs.throughput, allocation)
    short = demand - eff
    needs = np.flatnonzero((demand > 0) & (short > 1e-9 * demand))
    if not needs.size:
        return allocation
    out = allocation.copy()
    best = jobs.throughput[needs].argmax(axis=1)
    out[needs, best] += short[needs] / jobs.throughput[needs, best]
    rows = out.sum(axis=1)
    over = rows > 1.0
    out[over] /= rows[over, None]
    used = jobs.scale @ out
    out *= np.where(used > jobs.capacity, jobs.capacity / np.maximum(used, 1e-300), 1.0)[None, :]
    return out


def members(
    jobs: DemandJobs, group: IntArray, totals: FloatArray, theta: float | None, surplus: bool
) -> FloatArray:
    """Each group's aggregate time split exactly among its members (with `surplus`, the time
    beyond their demands too), then the demands the solver left short `lift`ed."""
    _, first = np.unique(group, return_index=True)
    split = split_groups(totals, jobs.throughput[first], jobs.demand(theta), group, surplus)
    return lift(jobs, split, theta)
