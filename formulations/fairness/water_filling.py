"""Water-filling max-min fairness: the leximin-optimal allocation (FORMULATIONS §1a).

Repeatedly maximize the lowest normalized share u_j = s_j·eff_j / (w_j·prop_j) of the jobs not yet
frozen, and freeze the bottlenecks at that level, until every job is frozen. The level LPs and the
LP-only bottleneck test are in `formulations/fairness/levels.py`, the LP itself (with optional space
sharing) in `formulations/fairness/share_lp.py`. Reported per job: `level` (u at which it froze) and
`iteration` (the level LP that froze it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pydantic import Field

from formulations.fairness.level_solvers import level_solver
from formulations.fairness.levels import WeightRule, water_fill
from formulations.fairness.max_min import lp_method_for, policy_throughput
from formulations.fairness.outcome import empty_outcome, levels_outcome
from formulations.fairness.share_input import Entities, ShareInput, share_input
from formulations.fairness.share_lp import ShareStructure
from formulations.fairness.share_result import job_answer
from formulations.fairness.space_sharing import SpaceSharingOptions, check_space_sharing
from solver.arrays import ClusterArrays
from solver.context import SolveContext
from solver.policy import Outcome, Policy
from solver.snapshot import Snapshot
from solver.status import Status


class WaterFillingOptions(SpaceSharingOptions):
    heterogeneity_aware: bool = Field(
        True, description="Use per-type throughputs; false treats every usable type as equal."
    )


def plain_rule(structure: ShareStructure) -> WeightRule:
    """Water filling without entities: ω_g = w_g, one level row with σ = 1."""
    return lambda active: (np.where(active, structure.weight, 0.0), np.ones(1))


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
        return empty_outcome(problem, prepared, Status.OPTIMAL)
    columns = int(s.eligible.sum()) + (s.pair_columns[0].size if s.pair_columns else 0)
    method = lp_method_for(columns)
    last, solver, levels = water_fill(
        s, rule(s), lambda state: level_solver(s, state, ctx, method), exact
    )
    answer = None
    if last is not None:
        answer = job_answer(problem, prepared.jobs, s, solver.blocks, last, problem.throughput)
    outcome = levels_outcome(problem, prepared, levels, answer)
    if not ctx.options.merge_identical:
        outcome.merged_groups = None
    return outcome


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: WaterFillingOptions, ctx: SolveContext
) -> Outcome:
    check_space_sharing(options.space_sharing, options.heterogeneity_aware)
    prepared = share_input(
        snapshot,
        problem,
        policy_throughput(problem, options.heterogeneity_aware),
        Entities.single(problem.num_jobs),
        merge=ctx.options.merge_identical,
        space_sharing=options.space_sharing,
        prune=options.prune_pairs,
    )
    return solve_levels(problem, prepared, plain_rule, ctx)


POLICY = Policy(
    name="water_filling",
    summary="Leximin max-min fairness: raise the lowest normalized share, freeze bottlenecks, "
    "repeat (Pareto-efficient max-min).",
    options=WaterFillingOptions,
    run=run,
    problem_class="LP sequence",
)
