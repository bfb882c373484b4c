"""What a policy is, and what its formulation hands back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Feature, Solution
from apportion.solver.context import SolveContext
from apportion.solver.model import Block
from apportion.solver.options import PolicyOptions
from apportion.solver.snapshot import Snapshot
from apportion.solver.status import IMPLIED, Status, Termination

# What a formulation hands the explanation builder (`solver.explain`) through its `Outcome`:
# references to the models it solved and what it knows about them, in its own (group) space.
# Building evidence costs nothing; only `options.explain` reads it. Duals follow the backends'
# convention (∂objective/∂bound, reduced costs c − Aᵀy) in the model's units; a stage's `scale`
# turns one unit of the model's objective into the policy's own, so a shadow price is always
# "objective gained per extra GPU" in the objective the user reads.


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


@dataclass(frozen=True)
class Outcome:
    """A formulation's answer in array form, before it is turned into a result document. Built
    once: a policy that learns more makes a new one (`dataclasses.replace`).

    `allocation` is X (jobs × GPU types, original job order); metrics are per-job arrays.
    `solution` is the solve that decided the answer: its termination, detail and gap are the
    answer's unless `termination`, `detail` or `mip_gap` say otherwise (a policy that solves
    several models, or searches on its own, knows them better than its last solve).
    """

    status: Status
    objective: float | None
    objective_name: str
    allocation: NDArray[np.float64]
    reasons: Mapping[int, str] = field(default_factory=dict)
    job_metrics: Mapping[str, NDArray[Any]] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    warnings: Sequence[str] = ()
    normalized_share: NDArray[np.float64] | None = None
    placements: Mapping[int, dict[str, int]] = field(default_factory=dict)  # job → node → GPUs
    merged_groups: int | None = None
    # Set by policies whose throughput or GPU use is not T·X and s·X (space sharing).
    effective_throughput: NDArray[np.float64] | None = None
    gpu_used: NDArray[np.float64] | None = None
    solution: Solution | None = None
    termination: Termination | None = None
    mip_gap: float | None = None
    detail: str | None = None
    # References to what the formulation solved, read only when options.explain asks for an
    # explanation (building it costs nothing).
    evidence: Evidence | None = None

    def but(self, **changes: Any) -> Outcome:
        """This outcome with `changes` (a new one: outcomes are never changed in place)."""
        return replace(self, **changes)

    def warned(self, *notes: str) -> Outcome:
        """This outcome with `notes` added to its warnings."""
        return replace(self, warnings=(*self.warnings, *notes))

    def summarized(self, **entries: Any) -> Outcome:
        """This outcome with `entries` added to its summary."""
        return replace(self, summary={**self.summary, **entries})

    @property
    def verdict(self) -> tuple[Termination, str | None, float | None]:
        """(termination, detail, gap) of the answer: the outcome's own where set, else its
        deciding solution's, else what the status implies."""
        solved = self.solution
        termination = self.termination
        if termination is None:
            termination = solved.termination if solved is not None else IMPLIED[self.status]
        detail = self.detail if self.detail is not None else (solved.detail if solved else None)
        gap = self.mip_gap if self.mip_gap is not None else (solved.mip_gap if solved else None)
        return termination, detail, gap


#: A policy's own options model.
OptionsT = TypeVar("OptionsT", bound=PolicyOptions)
#: What solves a policy: the snapshot, its arrays, the policy's own options, the context.
Runner = Callable[[Snapshot, ClusterArrays, OptionsT, SolveContext], Outcome]


@dataclass(frozen=True)
class PolicyDefaults:
    """Solve options a policy uses when the request leaves them unset."""

    time_limit: float | None = None
    mip_gap: float | None = None


@dataclass(frozen=True)
class Policy(Generic[OptionsT]):
    """A policy by name: what it optimizes, its options, its defaults, what it needs of a
    backend, and the function that solves it."""

    name: str
    summary: str
    options: type[OptionsT]
    run: Runner[OptionsT]
    problem_class: str = "LP"  # LP, MILP, "LP sequence" or "algorithm": for listings
    needs: frozenset[Feature] = frozenset({Feature.LP})
    defaults: PolicyDefaults = PolicyDefaults()


#: A policy whose options model is not known statically (the registry's, the pipeline's view).
AnyPolicy = Policy[Any]
