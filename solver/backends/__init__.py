"""Solver backends by name. Each declares its features; callers never branch on the name."""

from __future__ import annotations

from collections.abc import Callable

from solver.backends.base import Backend, Feature, LpMethod, Solution, SolveSettings
from solver.backends.highs import HighsBackend

DEFAULT_BACKEND = "highs"

_FACTORIES: dict[str, Callable[[], Backend]] = {
    HighsBackend.name: HighsBackend,
}


def backend_names() -> list[str]:
    return list(_FACTORIES)


def get_backend(name: str) -> Backend:
    """The backend called `name`; raises KeyError for an unknown one."""
    return _FACTORIES[name]()


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    _FACTORIES[name] = factory


__all__ = [
    "DEFAULT_BACKEND",
    "Backend",
    "Feature",
    "LpMethod",
    "Solution",
    "SolveSettings",
    "backend_names",
    "get_backend",
    "register_backend",
]
