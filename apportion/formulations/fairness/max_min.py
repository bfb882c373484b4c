"""Heterogeneity-aware max-min fairness (Gavel's LAS policy), FORMULATIONS §1.

For groups g of n_g identical jobs (identical T_g·, s_g, w_g and normalizer),
prop_g = Σ_k T_gk N_k / C:

    maximize    t
    subject to  (s_g / prop_g) Σ_k T_gk X_gk ≥ w_g t          ∀g   (share)
                Σ_k X_gk ≤ 1                                  ∀g   (time)
                Σ_g n_g s_g X_gk ≤ N_k                         ∀k   (capacity)
                X_gk ∈ [0, 1] where the job can run on k, absent elsewhere

The share LP of `share_lp.py` with every group active and one level (with space sharing, the
pair columns of §1c join it). The heterogeneity-agnostic variant replaces T_gk by 1 wherever the
job can run (`agnostic_definition="gavel"`: on every type its gang fits, as Gavel's baseline
does). Jobs that can run nowhere are left out of the LP (they would pin t at 0) and reported
with the reason.

The optimum fixes only the minimum; with `pareto` (the default) the Pareto LP of `pareto.py`
then maximizes Σ_g n_g v_g with every group at or above w_g t* (§1d), in one LP when every job
can reach its own ceiling level.
"""

from __future__ import annotations

from apportion.formulations.fairness.common import FairnessOptions, plain_input
from apportion.formulations.fairness.run import solve_once
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.policy import Outcome, Policy
from apportion.solver.snapshot import Snapshot


class MaxMinFairnessOptions(FairnessOptions):
    pass


def run(
    snapshot: Snapshot, problem: ClusterArrays, options: MaxMinFairnessOptions, ctx: SolveContext
) -> Outcome:
    return solve_once(problem, plain_input(snapshot, problem, options, ctx), ctx, options.pareto)


POLICY = Policy(
    name="max_min_fairness",
    summary="Maximize the minimum normalized share s_j·eff_j/(w_j·prop_j) (Gavel LAS).",
    options=MaxMinFairnessOptions,
    run=run,
)
