"""Maximum total throughput (FORMULATIONS §4): the linear LP of `linear.py` with

c_gk = T_gk                 (Σ_j eff_j, steps/s)
normalized=true: T_gk / prop_g   (Σ_j eff_j / prop_j, equal-share units)
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from apportion.formulations.objectives.linear import linear_outcome
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot


class MaxThroughputOptions(PolicyOptions):
    normalized: bool = Field(
        False,
        description="Maximize Σ_j eff_j / prop_j (each job's equal-share throughput) instead.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MaxThroughputOptions, ctx: SolveContext
) -> Outcome:
    weight = problem.throughput
    label = "total throughput (steps/s)"
    if options.normalized:
        prop = problem.equal_share_throughput
        weight = np.divide(
            weight, prop[:, None], out=np.zeros_like(weight), where=prop[:, None] > 0
        )
        label = "total normalized throughput Σ eff_j / prop_j"
    return linear_outcome(problem, ctx, weight, "max_total_throughput", label)


POLICY = Policy(
    name="max_total_throughput",
    summary="Maximize the sum of effective throughputs Σ_j eff_j (optionally over prop_j).",
    options=MaxThroughputOptions,
    run=run,
)
