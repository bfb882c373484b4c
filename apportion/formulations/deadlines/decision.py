"""What the deadline policy decided, handed from admission to the report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from apportion.formulations.deadlines.lease_plan import LeasePlan
from apportion.formulations.deadlines.packing import Placement
from apportion.formulations.deadlines.problem import LeaseProblem
from apportion.solver.arraytypes import IntArray
from apportion.solver.status import Status, Termination


@dataclass
class Admission:
    plan: LeasePlan
    status: Status
    sigma: int
    greedy_value: float
    mip_gap: float | None = None
    detail: str | None = None  # how the admission was solved, for the solver report
    termination: Termination | None = None  # why the admission's search stopped
    broken: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Another lending order for the jobs SRTF would lend to (a baseline's), None: SRTF.
    lending: Callable[[LeaseProblem, LeasePlan, IntArray], IntArray] | None = None


@dataclass
class LeaseRun:
    """Who runs in slot 0, where, and why; until when lent GPUs stay lent (None: no planned
    reservation needs them)."""

    placements: dict[int, Placement]
    mode: dict[int, str]  # held / reserved / lent / opportunistic
    idle: int
    lent_until: dict[int, float | None] = field(default_factory=dict)
