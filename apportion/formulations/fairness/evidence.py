"""What the share LPs hand the explanation builder (`solver.explain`) in `Outcome.evidence`:
each solved stage with the blocks its duals live in and the factor from the model's objective to
the policy's units.

Stage objectives, in the policy's units:
- max-min: t, the minimum normalized share (the model solves τ = t / r: factor r);
- level i (water filling, hierarchical): the increment of the lowest share of the groups not
  yet frozen, over their floors (factor r);
- pareto: Σ_g n_g v_g, the total normalized throughput, with every group at or above its level
  (the model's costs are scaled so the largest is `COST_SCALE`: factor top / COST_SCALE).

Shadow prices hold the normalizers prop_j = Σ_k T_jk N_k / C at this cluster's: they say how
much the objective, measured against today's equal shares, gains per extra GPU of a type.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.fairness.levels import Levels
from apportion.formulations.fairness.pareto import COST_SCALE
from apportion.formulations.fairness.share_input import ShareInput
from apportion.formulations.fairness.share_lp import ShareBlocks, ShareStructure
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends import Solution
from apportion.solver.policy import AllocationEvidence, LpStage
from apportion.solver.sparse import transpose_dot

MAX_MIN = "max-min"
PARETO = "pareto"
NORMALIZED = "normalizers held at this cluster's"
OBJECTIVES = {
    MAX_MIN: f"the minimum normalized share ({NORMALIZED})",
    PARETO: "the total normalized throughput Σ_j v_j, every job at or above its level "
    f"({NORMALIZED})",
}
CEILING = "every job reaches its own ceiling: the max-min level was computed, not solved as an LP"


def share_stage(
    name: str, solution: Solution, blocks: ShareBlocks, s: ShareStructure, objective: str = ""
) -> LpStage:
    """One solved share LP as a stage; `name` PARETO reads its objective as the Pareto LP's."""
    if name == PARETO:
        top = float(np.abs(transpose_dot(blocks.value, s.groups.count)).max(initial=0.0))
        scale = top / COST_SCALE if top > 0 else 1.0
    else:
        scale = blocks.level_scale
    x = blocks.x
    return LpStage(
        name,
        objective or OBJECTIVES.get(name, name),
        solution,
        scale,
        x.block,
        x.group,
        x.gpu,
        blocks.capacity,
        blocks.time,
        blocks.share,
        blocks.row_scale,
    )


def max_min_evidence(
    problem: ClusterArrays,
    prepared: ShareInput,
    first: LpStage,
    final: Solution,
    blocks: ShareBlocks,
) -> AllocationEvidence:
    """The max-min LP (whose duals price the GPU types) and, when it ran, the Pareto LP."""
    s = _structure(prepared)
    stages: tuple[LpStage, ...] = (first,)
    if final is not first.solution:
        stages = (first, share_stage(PARETO, final, blocks, s))
    level = (first.solution.objective or 0.0) * first.scale
    return _evidence(problem, prepared, stages, np.full(s.size, level), MAX_MIN, MAX_MIN)


def ceiling_evidence(
    problem: ClusterArrays,
    prepared: ShareInput,
    solution: Solution,
    blocks: ShareBlocks,
    level: float,
) -> AllocationEvidence:
    """Max-min and Pareto in one LP (every job at its ceiling level)."""
    s = _structure(prepared)
    stages = (share_stage(PARETO, solution, blocks, s),)
    return _evidence(problem, prepared, stages, np.full(s.size, level), PARETO, None, CEILING)


def levels_evidence(
    problem: ClusterArrays,
    prepared: ShareInput,
    final: Solution,
    blocks: ShareBlocks,
    levels: Levels,
    pareto_applied: bool,
) -> AllocationEvidence:
    """Water filling's last LP: the Pareto LP over the frozen levels, or else the last level
    LP (its duals price that level's increment, not the first level's)."""
    s = _structure(prepared)
    if pareto_applied:
        stage = share_stage(PARETO, final, blocks, s)
    else:
        name = f"level {levels.iterations}"
        stage = share_stage(name, final, blocks, s, f"the increment of level {levels.iterations}")
    return _evidence(problem, prepared, (stage,), levels.level, stage.name, None)


def _evidence(
    problem: ClusterArrays,
    prepared: ShareInput,
    stages: tuple[LpStage, ...],
    level: FloatArray,
    priced: str,
    bottleneck: str | None,
    note: str = "",
) -> AllocationEvidence:
    s = _structure(prepared)
    group = np.full(problem.num_jobs, -1, dtype=np.int64)
    group[prepared.jobs] = s.groups.inverse
    return AllocationEvidence(
        stages, group, s.groups.count, s.labels, level, "level", priced, bottleneck, note
    )


def _structure(prepared: ShareInput) -> ShareStructure:
    assert prepared.structure is not None
    return prepared.structure
