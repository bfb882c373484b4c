"""What a policy is, and what its formulation hands back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import Feature, Solution
from apportion.solver.context import SolveContext
from apportion.solver.model import Block
from apportion.solver.options import PolicyOptions
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import Status

# What a formulation hands the explanation builder (`solver.explain`) through its `Outcome`:
# references to the models it solved and what it knows about them, in its own (group) space.
# Building evidence costs nothing; only `options.explain` reads it. Duals follow the backends'
# convention (∂objective/∂bound, reduced costs c − Aᵀy) in the model's units; a stage's `scale`
# turns one unit of the model's objective into the policy's own, so a shadow price is always
# "objective gained per extra GPU" in the objective the user reads.
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class LpStage:
    """One solved allocation LP over columns X_gk (group g, GPU type k).

    `share` rows read v_g ≥ floor_g after division by `share_scale` (so their dual in the
    policy's units is scale · y_g / share_scale_g); `time` rows Σ_k X_gk ≤ 1; `capacity` rows
    Σ_g n_g s_g X_gk ≤ N_k, one per GPU type in the snapshot's order.
    """

    name: str
    objective: str
    solution: Solution
    scale: float
    x: Block
    x_group: IntArray
    x_gpu: IntArray
    capacity: Block | None = None
    time: Block | None = None
    share: Block | None = None
    share_scale: FloatArray | None = None

    @property
    def has_duals(self) -> bool:
        return self.solution.row_dual is not None and self.solution.col_dual is not None


@dataclass(frozen=True, eq=False)
class AllocationEvidence:
    """An allocation policy's LPs. The last stage produced the allocation; `priced` names the
    stage whose capacity duals are the shadow prices (the one whose objective the user reads
    as the policy's: the max-min level, not the Pareto stage that follows it); `bottleneck` the
    stage whose objective is the level itself, so a non-zero share dual there means the job
    holds the level down."""

    stages: tuple[LpStage, ...]
    group: IntArray  # group of each job, −1 for jobs left out of the LP
    count: FloatArray  # n_g
    labels: list[str]  # the row label of each group (its representative's id)
    level: FloatArray | None = None  # per group, the value its share row holds it at
    level_name: str = "level"
    priced: str | None = None
    bottleneck: str | None = None  # the stage whose non-zero share duals mark bottlenecks
    note: str = ""


@dataclass(frozen=True, eq=False)
class DecisionEvidence:
    """A MILP policy's per-job decisions with the reason behind each one that is not the best
    it could have had: `codes[j]` from the fixed vocabulary (docs/EXPLANATIONS.md), `texts[j]`
    the same in words, `detail[j]` the numbers behind it. Jobs without an entry were granted
    what they asked for."""

    codes: dict[int, str]
    texts: dict[int, str]
    rows: dict[int, list[str]] = field(default_factory=dict)
    detail: dict[int, dict[str, float | int | str | bool | None]] = field(default_factory=dict)
    granted: str = "granted"
    note: str = ""
    # Per GPU type (snapshot order), what one more GPU of it would gain the objective, when the
    # policy computed it (exactly, by solving again), and the stage those prices are for.
    prices: FloatArray | None = None
    price_stage: str | None = None


Evidence = AllocationEvidence | DecisionEvidence


@dataclass
class Outcome:
    """A formulation's answer in array form, before it is turned into a result document.

    `allocation` is X (jobs × GPU types, original job order); metrics are per-job arrays.
    `mip_gap` and `detail`, when set, speak for the whole answer (a policy that solves several
    models knows its gap better than the last model's solver does).
    """

    status: Status
    objective: float | None
    objective_name: str
    allocation: NDArray[np.float64]
    reasons: dict[int, str] = field(default_factory=dict)
    job_metrics: dict[str, NDArray[Any]] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    normalized_share: NDArray[np.float64] | None = None
    placements: dict[int, dict[str, int]] = field(default_factory=dict)  # job → node → GPUs
    merged_groups: int | None = None
    # Set by policies whose throughput or GPU use is not T·X and s·X (space sharing).
    effective_throughput: NDArray[np.float64] | None = None
    gpu_used: NDArray[np.float64] | None = None
    mip_gap: float | None = None
    detail: str | None = None
    # References to what the formulation solved, read only when options.explain asks for an
    # explanation (building it costs nothing).
    evidence: Evidence | None = None


Runner = Callable[[Snapshot, ClusterArrays, Any, SolveContext], Outcome]


@dataclass(frozen=True)
class PolicyDefaults:
    """Solve options a policy uses when the request leaves them unset."""

    time_limit: float | None = None
    mip_gap: float | None = None


@dataclass(frozen=True)
class Policy:
    """A policy by name: what it optimizes, its options, its defaults, what it needs of a
    backend, and the function that solves it."""

    name: str
    summary: str
    options: type[PolicyOptions]
    run: Runner
    problem_class: str = "LP"  # LP, MILP, "LP sequence" or "algorithm": for listings
    needs: frozenset[Feature] = frozenset({Feature.LP})
    defaults: PolicyDefaults = PolicyDefaults()
