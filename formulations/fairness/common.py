"""What every policy of the fairness family shares: its options, the throughput it optimizes,
and the LP method by model size."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from formulations.fairness.share_input import Entities, ShareInput, share_input
from formulations.fairness.share_lp import ShareStructure
from formulations.fairness.space_sharing import SpaceSharingOptions, check_space_sharing
from solver.arrays import ClusterArrays
from solver.backends import LpMethod
from solver.context import SolveContext
from solver.snapshot import Snapshot

FloatArray = NDArray[np.float64]

# Measured on the benchmark family: the LP is degenerate, so dual simplex crawls beyond a few
# thousand variables while interior point (with crossover, for an exact vertex) stays fast.
SIMPLEX_MAX_VARIABLES = 3_000


class FairnessOptions(SpaceSharingOptions):
    heterogeneity_aware: bool = Field(
        True, description="Use per-type throughputs; false treats every usable type as equal."
    )

    def check(self) -> None:
        check_space_sharing(self.space_sharing, self.heterogeneity_aware)


def policy_throughput(problem: ClusterArrays, heterogeneity_aware: bool) -> FloatArray:
    """The T the policy optimizes: measured throughputs, or 1 wherever the job can run."""
    if heterogeneity_aware:
        return problem.throughput
    return (problem.throughput > 0).astype(float)


def plain_input(
    snapshot: Snapshot, problem: ClusterArrays, options: FairnessOptions, ctx: SolveContext
) -> ShareInput:
    """The share structure of a policy without entities (max-min, water filling)."""
    options.check()
    return share_input(
        snapshot,
        problem,
        policy_throughput(problem, options.heterogeneity_aware),
        Entities.single(problem.num_jobs),
        merge=ctx.options.merge_identical,
        space_sharing=options.space_sharing,
        prune=options.prune_pairs,
    )


def lp_method_for(structure: ShareStructure) -> LpMethod:
    """Simplex while the LP is small (an exact vertex), interior point beyond."""
    pairs = structure.pair_columns[0].size if structure.pair_columns else 0
    columns = int(structure.eligible.sum()) + pairs
    return LpMethod.SIMPLEX if columns <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
