"""Running the share LP on a prepared input: once (max-min fairness) or level by level (water
filling, hierarchical fairness), and turning the answer into an `Outcome`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from formulations.fairness.common import lp_method_for
from formulations.fairness.level_solvers import ColdLevels, LevelSolver, level_solver
from formulations.fairness.levels import WeightRule, water_fill
from formulations.fairness.outcome import empty_outcome, levels_outcome, shares_outcome
from formulations.fairness.share_input import ShareInput
from formulations.fairness.share_lp import LevelState, ShareStructure
from formulations.fairness.share_result import job_answer
from solver.arrays import ClusterArrays
from solver.context import SolveContext
from solver.policy import Outcome
from solver.status import Status


def solve_once(problem: ClusterArrays, prepared: ShareInput, ctx: SolveContext) -> Outcome:
    """Max-min fairness: the share LP with every group active (ω_g = w_g, one level row)."""
    s = prepared.structure
    if s is None:
        return _unmerged(empty_outcome(problem, prepared, Status.OPTIMAL), ctx)
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    method = lp_method_for(s)
    solver: LevelSolver
    if s.pairs is not None:
        # With pair columns HiGHS's interior point (with crossover, in a session) was 3× faster
        # than Clarabel on unmerged pair LPs (294k columns: 20 s against 65 s).
        solver = level_solver(s, state, ctx, method)
    else:
        # One solve, no bottleneck test: the backend `auto` picks per size (Clarabel's interior
        # point for large LPs, measured fastest there), and the test columns are left out.
        solver = ColdLevels(s, ctx, method, single=True, name="max_min_fairness")
    solution = solver.solve(state)
    if not solution.status.has_solution:
        return _unmerged(empty_outcome(problem, prepared, solution.status), ctx)
    level = solver.blocks.level_value(solution)
    answer = job_answer(
        problem, prepared.jobs, s, solver.blocks, solution, problem.throughput, s.weight * level
    )
    outcome = shares_outcome(problem, prepared, answer, solution.status, s.weight, {}, {}, [])
    return _unmerged(outcome, ctx)


def solve_levels(
    problem: ClusterArrays,
    prepared: ShareInput,
    rule: Callable[[ShareStructure], WeightRule],
    ctx: SolveContext,
    exact: bool = False,
) -> Outcome:
    """Water filling over a prepared share structure, as an Outcome with per-job levels."""
    s = prepared.structure
    if s is None:
        return _unmerged(empty_outcome(problem, prepared, Status.OPTIMAL), ctx)
    method = lp_method_for(s)
    last, solver, levels = water_fill(
        s, rule(s), lambda state: level_solver(s, state, ctx, method), exact
    )
    answer = None
    if last is not None:
        answer = job_answer(
            problem, prepared.jobs, s, solver.blocks, last, problem.throughput, levels.floor
        )
    return _unmerged(levels_outcome(problem, prepared, levels, answer), ctx)


def _unmerged(outcome: Outcome, ctx: SolveContext) -> Outcome:
    """Merged groups are reported only when merging was on."""
    if not ctx.options.merge_identical:
        outcome.merged_groups = None
    return outcome
