"""Running the share LP on a prepared input: once (max-min fairness) or level by level (water
filling, hierarchical fairness), then the Pareto stage (`pareto.py`), and turning the answer
into an `Outcome`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from apportion.formulations.fairness.common import lp_method_for
from apportion.formulations.fairness.evidence import (
    MAX_MIN,
    ceiling_evidence,
    levels_evidence,
    max_min_evidence,
    share_stage,
)
from apportion.formulations.fairness.level_solvers import (
    ColdLevels,
    LevelSolver,
    level_solver,
    single_solver,
)
from apportion.formulations.fairness.levels import (
    INTERIOR_TOLERANCES,
    VERTEX_TOLERANCES,
    WeightRule,
    water_fill,
)
from apportion.formulations.fairness.outcome import empty_outcome, levels_outcome, shares_outcome
from apportion.formulations.fairness.pareto import (
    CEILING_SLACK,
    INTERIOR_FLOOR_SLACK,
    VERTEX_FLOOR_SLACK,
    ceiling_level,
    floored,
    frozen,
    may_reach,
)
from apportion.formulations.fairness.share_input import ShareInput
from apportion.formulations.fairness.share_lp import LevelState, ShareBlocks, ShareStructure
from apportion.formulations.fairness.share_result import (
    job_answer,
    repair_columns,
    resource_matrices,
)
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import LpMethod, Solution
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome
from apportion.solver.sparse import transpose_dot
from apportion.solver.status import Status

NAME = "max_min_fairness"
#: A repair of the max-min point above this (relative) is no round-off.
ROUND_OFF = 1e-12


def solve_once(
    problem: ClusterArrays, prepared: ShareInput, ctx: SolveContext, pareto: bool = True
) -> Outcome:
    """Max-min fairness: the share LP with every group active (ω_g = w_g, one level row), then
    the Pareto LP with every group at or above w_g t* (or both at once at the ceiling level)."""
    s = prepared.structure
    if s is None:
        return _unmerged(empty_outcome(problem, prepared, Status.OPTIMAL), ctx)
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    method = lp_method_for(s)
    if pareto and s.pairs is None:
        reached = _at_ceiling(problem, prepared, s, state, ctx, method)
        if reached is not None:
            return _unmerged(reached, ctx)
    solver = _first_solver(s, state, ctx, method, pareto)
    solution = solver.solve(state)
    if not solution.status.has_solution:
        failed = empty_outcome(problem, prepared, solution.status).but(solution=solution)
        return _unmerged(failed, ctx)
    blocks, status = solver.blocks, solution.status
    level = blocks.level_value(solution)
    first = share_stage(MAX_MIN, solution, blocks, s)
    warnings: list[str] = []
    stage = "off"
    if pareto and status is Status.OPTIMAL and _all_bottlenecks(s, blocks, solution, solver.vertex):
        stage = "every job at the level"
    elif pareto and status is Status.OPTIMAL:
        level *= 1.0 - (VERTEX_FLOOR_SLACK if solver.vertex else INTERIOR_FLOOR_SLACK)
        best = solver.pareto(floored(state, level))
        stage, note = _taken(best, "second LP")
        if note:
            warnings.append(note)
        else:
            solution, blocks = best, solver.blocks
    answer = job_answer(
        problem, prepared.jobs, s, blocks, solution, problem.throughput, s.weight * level
    )
    summary = {"pareto": stage}
    outcome = shares_outcome(problem, prepared, answer, status, s.weight, {}, summary, warnings)
    evidence = max_min_evidence(problem, prepared, first, solution, blocks)
    return _unmerged(outcome.but(evidence=evidence, solution=solution), ctx)


def _all_bottlenecks(
    s: ShareStructure, blocks: ShareBlocks, solution: Solution, vertex: bool
) -> bool:
    """True when the duals prove every group is held at w_g t* in every max-min optimum (a
    non-zero share dual makes its row tight in all of them): the shares are then the same in
    every optimum, so this one is already Pareto-efficient and the second LP is skipped. The
    tolerances are water filling's, which freezes bottlenecks by the same test.

    The proof needs duals that are feasible, and a solver's are only to its tolerance: a
    column whose share gain is a thousandth of the group's best (a job's slow type) can
    carry a positive reduced cost below that tolerance, with a share dual that is then no
    proof at all (the job could still rise on it: an idle GPU it can use). So every column's
    gain at the share duals must also be paid for by its time and capacity prices, to the
    dual tolerance relative to the larger of the two. And the point itself must need no
    repair beyond round-off: a repaired point sits below t*, where other optima may hold more
    (throughputs spanning 1e7 make that 1e-6 of the total for a 1e-9 step)."""
    if solution.row_dual is None or blocks.time is None or blocks.capacity is None:
        return False
    dual_tol, slack_tol = VERTEX_TOLERANCES if vertex else INTERIOR_TOLERANCES
    target = s.weight * blocks.level_value(solution)
    value = blocks.value @ solution.x[: blocks.value.shape[1]]
    duals = np.abs(blocks.share_duals(solution))
    score = duals * s.weight
    tight = value - target <= slack_tol * np.abs(target)
    if not (tight & (score > dual_tol * float(score.max(initial=0.0)))).all():
        return False
    time_m, capacity_m = resource_matrices(s, blocks)
    columns = solution.x[: blocks.value.shape[1]]
    if repair_columns(columns, time_m, capacity_m, s, blocks)[1] > ROUND_OFF:
        return False
    gain = transpose_dot(blocks.value, duals)
    price = transpose_dot(time_m, np.abs(solution.dual(blocks.time)))
    price += transpose_dot(capacity_m, np.abs(solution.dual(blocks.capacity)))
    tol = dual_tol if vertex else slack_tol
    return bool((gain - price <= tol * np.maximum(gain, price)).all())


def _first_solver(
    s: ShareStructure, state: LevelState, ctx: SolveContext, method: LpMethod, pareto: bool
) -> LevelSolver:
    if s.pairs is not None:
        # With pair columns HiGHS's interior point (with crossover, in a session) beats Clarabel
        # on unmerged pair LPs (the `max_min` bench's space-sharing rows).
        return level_solver(s, state, ctx, method)
    if pareto and method is LpMethod.SIMPLEX:
        # A session keeps the basis: the Pareto LP then starts from the max-min vertex and
        # costs a fraction of the first solve, where a cold one costs as much again.
        return single_solver(s, state, ctx, method, NAME)
    # One solve, no bottleneck test: the backend `auto` picks per size (Clarabel's interior
    # point for large LPs, fastest there in the `backends` bench), and the test columns are
    # left out.
    return ColdLevels(s, ctx, method, single=True, name=NAME)


def _at_ceiling(
    problem: ClusterArrays,
    prepared: ShareInput,
    s: ShareStructure,
    state: LevelState,
    ctx: SolveContext,
    method: LpMethod,
) -> Outcome | None:
    """Max-min and Pareto in one LP when every job can reach the ceiling level t̄ (pareto.py);
    None when the floors w_g t̄ cannot all be met (then t* < t̄: two LPs it is)."""
    level = ceiling_level(s)
    if not (np.isfinite(level) and level > 0 and may_reach(s, level)):
        return None
    # An interior point's floors sit as far below as the two-LP path's (`INTERIOR_FLOOR_SLACK`):
    # 1e-9 below a job's ceiling leaves it a feasible slab thinner than its tolerances.
    level *= 1.0 - (CEILING_SLACK if method is LpMethod.SIMPLEX else INTERIOR_FLOOR_SLACK)
    solver = ColdLevels(s, ctx, method, single=True, name=NAME)
    # Half of what is left at most: if the floors turn out infeasible, the two LPs need the rest.
    solution = solver.pareto(
        frozen(s.weight * level, s.num_entities), time_limit=ctx.budget.share(0.5)
    )
    if solution.status is not Status.OPTIMAL:
        return None
    answer = job_answer(
        problem, prepared.jobs, s, solver.blocks, solution, problem.throughput, s.weight * level
    )
    summary = {"pareto": "ceiling"}
    outcome = shares_outcome(problem, prepared, answer, Status.OPTIMAL, s.weight, {}, summary, [])
    evidence = ceiling_evidence(problem, prepared, solution, solver.blocks, level)
    return outcome.but(evidence=evidence, solution=solution)


def _taken(solution: Solution, stage: str) -> tuple[str, str]:
    """(stage, warning): the Pareto LP's answer is used only when it is optimal."""
    if solution.status is Status.OPTIMAL:
        return stage, ""
    return "not applied", (
        f"the Pareto stage ended {solution.status.value} ({solution.termination.value}: "
        f"{solution.detail}): the answer is "
        "optimal for its own objective but other jobs might use what some leave idle"
    )


def solve_levels(
    problem: ClusterArrays,
    prepared: ShareInput,
    rule: Callable[[ShareStructure], WeightRule],
    ctx: SolveContext,
    exact: bool = False,
    pareto: bool = True,
) -> Outcome:
    """Water filling over a prepared share structure, as an Outcome with per-job levels; then,
    when every group froze, the Pareto LP over the frozen levels (a no-op in exact arithmetic,
    see pareto.py: it removes what solver tolerances leave)."""
    s = prepared.structure
    if s is None:
        return _unmerged(empty_outcome(problem, prepared, Status.OPTIMAL), ctx)
    method = lp_method_for(s)
    last, solver, levels = water_fill(
        s, rule(s), lambda state: level_solver(s, state, ctx, method), exact
    )
    answer, stage, note = None, "off", ""
    if last is not None:
        blocks: ShareBlocks = solver.blocks
        complete = levels.failure is None and levels.floor is not None
        if pareto and complete and levels.floor is not None and not ctx.budget.spent():
            best = solver.pareto(frozen(levels.floor, s.num_entities))
            if best.status is not Status.OPTIMAL and not ctx.budget.spent():
                # Floors at the frozen levels themselves leave a sliver; 1e-9 below, the
                # solvers find a vertex (as max-min's Pareto floors, `VERTEX_FLOOR_SLACK`).
                relaxed = levels.floor * (1.0 - VERTEX_FLOOR_SLACK)
                best = solver.pareto(frozen(relaxed, s.num_entities))
            stage, note = _taken(best, "final LP")
            if not note:
                last, blocks = best, solver.blocks
        answer = job_answer(
            problem, prepared.jobs, s, blocks, last, problem.throughput, levels.floor
        )
    outcome = levels_outcome(problem, prepared, levels, answer)
    if answer is not None and last is not None:
        outcome = outcome.but(
            evidence=levels_evidence(
                problem, prepared, last, blocks, levels, stage != "off" and not note
            ),
            # The LP that stopped water filling early, if one did, says why it stopped.
            solution=levels.failure or last,
        )
    if answer is not None:
        outcome = outcome.summarized(pareto=stage)
    if note:
        outcome = outcome.warned(note)
    return _unmerged(outcome, ctx)


def _unmerged(outcome: Outcome, ctx: SolveContext) -> Outcome:
    """Merged groups are reported only when merging was on."""
    return outcome if ctx.options.merge_identical else outcome.but(merged_groups=None)
