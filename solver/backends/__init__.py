"""Solver backends by name. Each declares its features; callers never branch on the name."""

from __future__ import annotations

from collections.abc import Callable

from solver.backends.base import Backend, Feature, LpMethod, Solution, SolveSettings
from solver.backends.clarabel_direct import ClarabelBackend
from solver.backends.highs import HighsBackend

#: "auto" picks per model by measurement (see `choose_backend`); any other name forces it.
AUTO = "auto"
DEFAULT_BACKEND = AUTO

_FACTORIES: dict[str, Callable[[], Backend]] = {
    HighsBackend.name: HighsBackend,
    ClarabelBackend.name: ClarabelBackend,
}


def backend_names() -> list[str]:
    return [AUTO, *_FACTORIES]


def choose_backend(name: str, is_mip: bool, lp_method: LpMethod) -> Backend:
    """Resolve `auto`: HiGHS for MILPs and simplex-friendly LPs, Clarabel's interior point for
    LPs a formulation marks as interior-point work (measured 2.5× faster than HiGHS's IPM on the
    max-min LP at 20,000 × 8, and it does not stall at 100,000 × 3 where HiGHS's does)."""
    if name != AUTO:
        return get_backend(name)
    if not is_mip and lp_method is LpMethod.IPM:
        return ClarabelBackend()
    return HighsBackend()


def get_backend(name: str) -> Backend:
    """The backend called `name`; raises KeyError for an unknown one."""
    return _FACTORIES[name]()


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    _FACTORIES[name] = factory


__all__ = [
    "AUTO",
    "DEFAULT_BACKEND",
    "Backend",
    "Feature",
    "LpMethod",
    "Solution",
    "SolveSettings",
    "backend_names",
    "choose_backend",
    "get_backend",
    "register_backend",
]
