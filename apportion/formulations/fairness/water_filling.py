"""Water-filling max-min fairness: the leximin-optimal allocation (FORMULATIONS §1a).

Repeatedly maximize the lowest normalized share u_j = s_j·eff_j / (w_j·prop_j) of the jobs not yet
frozen, and freeze the bottlenecks at that level, until every job is frozen. The level LPs and the
LP-only bottleneck test are in `formulations/fairness/levels.py`, the LP itself (with optional space
sharing) in `formulations/fairness/share_lp.py`. Reported per job: `level` (u at which it froze) and
`iteration` (the level LP that froze it).
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.fairness.common import FairnessOptions, plain_input
from apportion.formulations.fairness.levels import WeightRule
from apportion.formulations.fairness.run import solve_levels
from apportion.formulations.fairness.share_lp import ShareStructure
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot


class WaterFillingOptions(FairnessOptions):
    pass


def plain_rule(structure: ShareStructure) -> WeightRule:
    """Water filling without entities: ω_g = w_g, one level row with σ = 1."""
    return lambda active: (np.where(active, structure.weight, 0.0), np.ones(1))


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: WaterFillingOptions, ctx: SolveContext
) -> Outcome:
    prepared = plain_input(snapshot, problem, options, ctx)
    return solve_levels(problem, prepared, plain_rule, ctx, pareto=options.pareto)


POLICY = Policy(
    name="water_filling",
    summary="Leximin max-min fairness: raise the lowest normalized share, freeze bottlenecks, "
    "repeat (Pareto-efficient max-min).",
    options=WaterFillingOptions,
    run=run,
    problem_class="LP sequence",
)
