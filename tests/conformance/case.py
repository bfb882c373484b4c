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


def all_cases() -> list[Case]:
    import tests.conformance as package

    cases: list[Case] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.conformance.{info.name}")
            cases.extend(module.CASES)
    return cases
