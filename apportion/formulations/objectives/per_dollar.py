"""Throughput per dollar (FORMULATIONS §4): the linear LP of `linear.py` with

c_gk = T_gk / p_k            (Gavel's objective: steps/s of each job weighted by 1 / price
                              per GPU-hour)
gang_price=true: T_gk / (s_g p_k)   (steps per dollar of the whole gang)
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from apportion.formulations.inputs import require_prices
from apportion.formulations.objectives.linear import linear_outcome
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.options import PolicyOptions
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot

NAME = "throughput_per_dollar"


class PerDollarOptions(PolicyOptions):
    gang_price: bool = Field(
        False,
        description="Divide by the price of the job's whole gang, s_j·p_k (steps per dollar), "
        "instead of Gavel's T_jk / p_k.",
    )


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: PerDollarOptions, ctx: SolveContext
) -> Outcome:
    usable = np.asarray(problem.eligible.any(axis=0), dtype=bool)
    require_prices(problem, usable, NAME, positive=True)
    price = np.where(usable, problem.price_per_hour, 1.0)
    weight = problem.throughput / price[None, :]
    label = "Σ_jk T_jk X_jk / p_k (steps/s per dollar-per-GPU-hour)"
    if options.gang_price:
        weight = weight / problem.scale_factor[:, None]
        label = "Σ_jk T_jk X_jk / (s_j p_k) (steps per dollar)"
    return linear_outcome(problem, ctx, weight, NAME, label)


POLICY = Policy(
    name=NAME,
    summary="Maximize throughput per dollar Σ_jk T_jk X_jk / p_k (prices per GPU-hour).",
    options=PerDollarOptions,
    run=run,
)
