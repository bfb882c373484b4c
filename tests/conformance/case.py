"""A conformance case: a tiny hand-solved instance every backend must agree on.

Cases live in `cases_<topic>.py` modules next to this one, each exposing `CASES`; the runner
collects them all, so adding a policy means adding one module, not editing a shared list.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apportion.solver import SolveResult


@dataclass(frozen=True)
class Case:
    name: str
    policy: str
    snapshot: dict[str, Any]
    objective: float  # worked out by hand in the case's docstring or comment
    options: dict[str, Any] = field(default_factory=dict)
    # Extra assertions on the returned result (feasibility of the allocation, placements, ...).
    check: Callable[[SolveResult], None] | None = None
    # How far an objective of 0 may read: interior points leave ~1e-8 crumbs on a job that gets
    # nothing (a FIFO job whose turn never comes).
    abs_tol: float = 1e-9
    # Throughputs or weights spanning 1e6 or more: the splitting methods (see combos) may stop at
    # their own tolerance there, which they must then say (not optimal); every other solver must
    # still prove the optimum. Their answers are not rescaled (test_range_answers).
    ill_conditioned: bool = False


def all_cases() -> list[Case]:
    import tests.conformance as package

    cases: list[Case] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.conformance.{info.name}")
            cases.extend(module.CASES)
    return cases
