"""What the deadline policy decided, handed from admission to the report."""

from __future__ import annotations

from dataclasses import dataclass, field

from apportion.formulations.deadlines.lease_plan import LeasePlan
from apportion.formulations.deadlines.packing import Placement
from apportion.solver.status import Status


@dataclass
class Admission:
    plan: LeasePlan
    status: Status
    sigma: int
    greedy_value: float
    mip_gap: float | None = None
    detail: str | None = None  # how the admission was solved, for the solver report
    broken: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class LeaseRun:
    """Who runs in slot 0, where, and why."""

    placements: dict[int, Placement]
    mode: dict[int, str]  # reserved / spare / opportunistic
    idle: int
