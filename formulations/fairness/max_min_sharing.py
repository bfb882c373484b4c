"""Max-min fairness with space sharing (FORMULATIONS §1 with the pair columns of §1c).

The single LP of `formulations/fairness/share_lp.py` with every group active (ω_g = w_g, one level
row): maximize t subject to u_g ≥ t for all groups, over single and pair columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from formulations.fairness.level_solvers import level_solver
from formulations.fairness.outcome import empty_outcome, shares_outcome
from formulations.fairness.share_input import Entities, share_input
from formulations.fairness.share_lp import LevelState
from formulations.fairness.share_result import job_answer
from formulations.fairness.space_sharing import check_space_sharing
from solver.arrays import ClusterArrays
from solver.backends import LpMethod
from solver.context import SolveContext
from solver.policy import Outcome
from solver.snapshot import Snapshot
from solver.status import Status

if TYPE_CHECKING:
    from formulations.fairness.max_min import MaxMinFairnessOptions

# The same threshold as formulations.fairness.max_min (not imported: it imports this module).
SIMPLEX_MAX_VARIABLES = 3_000


def run_space_sharing(
    snapshot: Snapshot,
    problem: ClusterArrays,
    options: MaxMinFairnessOptions,
    ctx: SolveContext,
) -> Outcome:
    check_space_sharing(options.space_sharing, options.heterogeneity_aware)
    prepared = share_input(
        snapshot,
        problem,
        problem.throughput,
        Entities.single(problem.num_jobs),
        merge=ctx.options.merge_identical,
        space_sharing=True,
        prune=options.prune_pairs,
    )
    s = prepared.structure
    if s is None:
        return empty_outcome(problem, prepared, Status.OPTIMAL)
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    columns = int(s.eligible.sum()) + (s.pair_columns[0].size if s.pair_columns else 0)
    # Simplex while small, interior point beyond; HiGHS's (with crossover) under the default
    # backend: 3× faster than Clarabel on unmerged pair LPs (294k columns: 20 s against 65 s).
    method = LpMethod.SIMPLEX if columns <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
    solver = level_solver(s, state, ctx, method)
    solution = solver.solve(state)
    blocks = solver.blocks
    if not solution.status.has_solution:
        return empty_outcome(problem, prepared, solution.status)
    answer = job_answer(problem, prepared.jobs, s, blocks, solution, problem.throughput)
    outcome = shares_outcome(problem, prepared, answer, solution.status, s.weight, {}, {}, [])
    if not ctx.options.merge_identical:
        outcome.merged_groups = None
    return outcome
