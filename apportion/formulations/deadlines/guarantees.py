"""When not every earlier guarantee can be kept: break as few as possible, then keep the most
value (FORMULATIONS §6).

The lease MILP of `lease_milp` with the guaranteed jobs' `choose` rows relaxed to ≤ 1 is solved
twice, lexicographically:

    1.  maximize  Σ_{v of guaranteed j} s_{j,v}          (guarantees kept, an integer: exact)
    2.  maximize  Σ_{j,v} w_{j,v} s_{j,v}   s.t.  Σ_{v of guaranteed j} s_{j,v} ≥ k*

Both within what is left of the request's budget; the first must be proven (a count short of
the optimum would break a guarantee needlessly), else the caller keeps its greedy packing, which
is also preferred on ties so that equal answers stay the greedy's (least slack, largest first).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from apportion.formulations.deadlines.lease_milp import MILP_TUNING, LeaseModel, build
from apportion.formulations.deadlines.lease_plan import LeasePlan, plan_violations
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import IntArray
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Sense
from apportion.solver.status import Status


def fewest_broken(problem: LeaseProblem, jobs: IntArray, ctx: SolveContext) -> LeasePlan | None:
    """The plan that breaks the fewest guarantees, then admits the most value; None when the
    budget does not allow proving the first stage."""
    kept_model = _soft(problem, jobs)
    guaranteed = problem.guaranteed[kept_model.row_job].astype(float)
    kept_model.model.set_objective({kept_model.s: guaranteed}, Sense.MAXIMIZE)
    first = ctx.solve(SolveRequest(kept_model.model, mip_gap=0.0, tuning=MILP_TUNING))
    if first.status is not Status.OPTIMAL or first.objective is None:
        return None
    kept = round(first.objective)
    valued = _soft(problem, jobs)
    row = sp.csr_matrix(problem.guaranteed[valued.row_job].astype(float)[None, :])
    valued.model.add_constraints("kept", {valued.s: row}, lower=float(kept))
    start = np.arange(first.x.size), first.x
    second = ctx.solve(SolveRequest(valued.model, start=start, tuning=MILP_TUNING))
    x = second.x if second.status.has_solution else first.x
    plan = valued.plan(problem, x)
    return None if plan_violations(problem, plan) else plan


def _soft(problem: LeaseProblem, jobs: IntArray) -> LeaseModel:
    return build(problem, jobs, soft_guarantees=True)
