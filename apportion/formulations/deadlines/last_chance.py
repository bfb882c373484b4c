"""Last chance: the SLO jobs without a guarantee that must start in this lease or miss every
deadline go first among the SLO jobs lent GPUs, when the deadlines still fit (FORMULATIONS §6,
"lending").

An SLO job j without a guarantee that can still meet an option, running from now on without a
break, has slack s_j (`lending.slack`: the time it can still wait). When s_j < lease_start + ℓ −
now, it must start in this lease: lent GPUs are held to the end of the lease, so waiting for
the next boundary is a certain miss. Shortest remaining time first would still place it behind
every shorter job, and a long job declined by the lease price (a guarantee that reserves more
GPU-leases than it is worth) keeps waiting until it can meet nothing.

Whether putting it first costs another job its deadline is decided by the earliest deadline
first test on the GPU-time the plan leaves free (fluid, per slot: the cluster less the holders
and the reservations, over [max(now, slot start), slot end)): with the SLO jobs without a
guarantee that can still meet an option sorted by their earliest reachable deadline D_k, and
work g_k (o_k + E_k) (o_k: the restart a job pays unless it holds GPUs or ran on them up to
now, a call at a boundary, and stays there),

    Σ_{k ≤ i} g_k (o_k + E_k)  ≤  free GPU-seconds in [now, D_i)        for every i.

When it holds, every one of them can still meet its deadline in deadline order (earliest
deadline first meets every deadline whenever any order does, in this relaxation), so the jobs
at their last chance go first. When it fails, the cluster is over-committed and the order stays
shortest remaining time first: like Moore and Hodgson's rule for the most deadlines met, it
gives up the longest jobs rather than let them push the shorter ones late. Either way,
best-effort jobs keep their places in the order (only the SLO jobs among themselves are
reordered), so a promotion never takes a best-effort job's turn.

Running on. A job at its last chance that ran up to now with s_j < o_j meets its earliest
reachable deadline D_j only if it goes on where it is: staying, it ends at now + E_j ≤ D_j;
stopped or moved, at now + o_j + E_j > D_j or later. So when the test above holds it stays on
its GPUs, ahead of the whole lending order (a stop would cost it its value for nothing; a
best-effort job loses only a wait), as long as the guaranteed jobs due now still fit
consolidated beside it: a guarantee is a promise, the job's deadline is not.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.deadlines.lease_plan import LeasePlan
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray

#: Seconds of slack on the test's sums of seconds (float round-off).
TOLERANCE = 1e-6


def at_last_chance(problem: LeaseProblem, plan: LeasePlan, slack: FloatArray) -> BoolArray:
    """SLO jobs without a guarantee that meet no option unless they start before the lease
    ends, when the deadlines of every SLO job without a guarantee still fit (module docstring);
    all False otherwise."""
    left = problem.lease_start + problem.lease - problem.now
    open_ = ~plan.admitted & problem.is_slo & (problem.leases > 0) & problem.fits_cluster
    last: BoolArray = open_ & (slack >= -TOLERANCE) & (slack < left)
    if last.any() and not deadlines_fit(problem, plan, slack, open_ & (slack >= -TOLERANCE)):
        last[:] = False
    return last


def deadlines_fit(
    problem: LeaseProblem, plan: LeasePlan, slack: FloatArray, jobs: BoolArray
) -> bool:
    """The earliest deadline first test of the module docstring for `jobs`."""
    run = restart(problem) + problem.remaining
    due = problem.now + slack + run  # each job's earliest reachable option
    order = np.flatnonzero(jobs)
    order = order[np.argsort(due[order], kind="stable")]
    need = np.cumsum(problem.demand[order] * run[order])
    return bool((need <= free_until(problem, plan, jobs, due[order]) + TOLERANCE).all())


def restart(problem: LeaseProblem) -> FloatArray:
    """o_j, the restart a job pays to run from now on; none for a job that holds GPUs or ran
    on them up to now (a call at a boundary), if it stays on them."""
    out: FloatArray = np.where(
        ran_up_to_now(problem) | (problem.holdings.slots > 0), 0.0, problem.overhead
    )
    return out


def ran_up_to_now(problem: LeaseProblem) -> BoolArray:
    """Jobs that ran on GPUs up to now (a call at a boundary)."""
    ran = np.zeros(problem.num_jobs, dtype=bool)
    ran[list(problem.holdings.current)] = True
    return ran


def must_run_on(problem: LeaseProblem, last: BoolArray, slack: FloatArray) -> IntArray:
    """Jobs at their last chance that ran up to now and whose slack is shorter than their
    restart: a move or a stop costs them every deadline, so they stay where they are."""
    out: IntArray = np.flatnonzero(last & ran_up_to_now(problem) & (slack < problem.overhead))
    return out


def free_until(
    problem: LeaseProblem, plan: LeasePlan, jobs: BoolArray, times: FloatArray
) -> FloatArray:
    """GPU-seconds the plan leaves free from now to each of `times`: per slot the cluster less
    the holders (but those among `jobs`, whose work is counted) and the reservations; the whole
    cluster after the horizon."""
    free = plan.room(problem)[:, 0].astype(float)
    for j in np.flatnonzero(jobs & (problem.holdings.slots > 0)).tolist():
        free[: problem.holdings.slots[j]] += problem.demand[j]
    starts = problem.lease_start + problem.lease * np.arange(problem.horizon)
    begin = np.maximum(starts, problem.now)
    end = np.minimum(starts + problem.lease, times[:, None])
    inside: FloatArray = np.clip(end - begin, 0.0, None) @ free
    horizon_end = max(problem.lease_start + problem.lease * problem.horizon, problem.now)
    after: FloatArray = problem.capacity * np.clip(times - horizon_end, 0.0, None)
    return inside + after


def slo_first_at_last_chance(problem: LeaseProblem, order: IntArray, last: BoolArray) -> IntArray:
    """`order` with its SLO jobs of the first tier reordered among their own places: those at
    their last chance first (in their order), then the others; best-effort jobs stay put."""
    places = np.flatnonzero(problem.is_slo[order])
    slo = order[places]
    out = order.copy()
    out[places] = np.concatenate([slo[last[slo]], slo[~last[slo]]])
    return out
