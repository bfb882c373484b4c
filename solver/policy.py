"""What a policy is, and what its formulation hands back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from solver.arrays import ClusterArrays
from solver.backends import Feature
from solver.context import SolveContext
from solver.options import PolicyOptions
from solver.snapshot import Snapshot
from solver.status import Status


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
