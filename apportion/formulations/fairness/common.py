"""What every policy of the fairness family shares: its options, the throughput it optimizes,
and the LP method by model size."""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from apportion.formulations.fairness.share_input import Entities, ShareInput, share_input
from apportion.formulations.fairness.share_lp import ShareStructure
from apportion.formulations.fairness.space_sharing import SpaceSharingOptions, check_space_sharing
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.backends import LpMethod
from apportion.solver.context import SolveContext
from apportion.solver.snapshot import Snapshot

# Measured on the benchmark family: the LP is degenerate, so dual simplex crawls beyond a few
# thousand variables while interior point (with crossover, for an exact vertex) stays fast.
SIMPLEX_MAX_VARIABLES = 3_000


AgnosticDefinition = Literal["usable", "gavel"]


class FairnessOptions(SpaceSharingOptions):
    heterogeneity_aware: bool = Field(
        True, description="Use per-type throughputs; false treats every usable type as equal."
    )
    agnostic_definition: AgnosticDefinition = Field(
        "usable",
        description="With heterogeneity_aware=false: usable (T := 1 where the job runs, time "
        "only there) or gavel (Gavel's baseline: T := 1 on every type, so time on a type where "
        "the job makes no progress counts as a share; only gangs too wide for a type are kept "
        "off it).",
    )
    pareto: bool = Field(
        True,
        description="After the fair levels are fixed, give what is left to the jobs that gain "
        "most (total normalized throughput), keeping every job at or above its level, so no "
        "job's share can rise without another's falling and no usable GPU stays idle.",
    )

    def check(self) -> None:
        check_space_sharing(self.space_sharing, self.heterogeneity_aware)


def policy_throughput(
    problem: ClusterArrays, heterogeneity_aware: bool, definition: AgnosticDefinition = "usable"
) -> FloatArray:
    """The T the policy optimizes: measured throughputs, or 1 wherever the job can run
    (`usable`), or 1 on every type (`gavel`)."""
    if heterogeneity_aware:
        return problem.throughput
    if definition == "gavel":
        return np.ones_like(problem.throughput)
    return (problem.throughput > 0).astype(float)


def policy_eligible(
    problem: ClusterArrays, heterogeneity_aware: bool, definition: AgnosticDefinition = "usable"
) -> BoolArray:
    """Where the policy may give time: where the job runs (positive throughput and the gang
    fits), or, for Gavel's agnostic baseline, wherever the gang fits."""
    if heterogeneity_aware or definition == "usable":
        return problem.eligible
    fits: BoolArray = problem.scale_factor[:, None] <= problem.gpu_count[None, :]
    return fits


def plain_input(
    snapshot: Snapshot, problem: ClusterArrays, options: FairnessOptions, ctx: SolveContext
) -> ShareInput:
    """The share structure of a policy without entities (max-min, water filling)."""
    options.check()
    aware, definition = options.heterogeneity_aware, options.agnostic_definition
    return share_input(
        snapshot,
        problem,
        policy_throughput(problem, aware, definition),
        Entities.single(problem.num_jobs),
        merge=ctx.options.merge_identical,
        space_sharing=options.space_sharing,
        prune=options.prune_pairs,
        eligible=policy_eligible(problem, aware, definition),
    )


def lp_method_for(structure: ShareStructure) -> LpMethod:
    """Simplex while the LP is small (an exact vertex), interior point beyond."""
    pairs = structure.pair_columns[0].size if structure.pair_columns else 0
    columns = int(structure.eligible.sum()) + pairs
    return LpMethod.SIMPLEX if columns <= SIMPLEX_MAX_VARIABLES else LpMethod.IPM
