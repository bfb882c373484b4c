"""Solver backends by name. Each declares its features; callers never branch on the name."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from apportion.solver.backends.base import (
    Backend,
    Feature,
    LpMethod,
    OnBound,
    OnIncumbent,
    Scalar,
    Session,
    Solution,
    SolveSettings,
)
from apportion.solver.backends.clarabel_direct import ClarabelBackend
from apportion.solver.backends.highs import HighsBackend

#: "auto" picks per model by measurement (see `choose_backend`); any other name forces it.
AUTO = "auto"
DEFAULT_BACKEND = AUTO


def _lazy(module: str, cls: str) -> Callable[[], Backend]:
    """A factory that imports its module on first use (cvxpy alone takes over a second)."""

    def make() -> Backend:
        backend: Backend = getattr(importlib.import_module(module), cls)()
        return backend

    return make


_FACTORIES: dict[str, Callable[[], Backend]] = {
    HighsBackend.name: HighsBackend,
    ClarabelBackend.name: ClarabelBackend,
    "blocks": _lazy("apportion.solver.backends.blocks", "BlocksBackend"),
    "cvxpy": _lazy("apportion.solver.backends.cvxpy_backend", "CvxpyBackend"),
    "pulp": _lazy("apportion.solver.backends.pulp_backend", "PulpBackend"),
}


def backend_names() -> list[str]:
    return [AUTO, *_FACTORIES]


def shaped_backends() -> tuple[type[Backend], ...]:
    """Backends that solve LPs of declared block shape, in order of preference (imported when
    a model asks for one: a small solve never needs them)."""
    from apportion.solver.backends.blocks import BlocksBackend

    return (BlocksBackend,)


def choose_backend(
    name: str,
    is_mip: bool,
    lp_method: LpMethod,
    wants: frozenset[Feature] = frozenset(),
    shaped: bool = False,
) -> Backend:
    """Resolve `auto` by capability: the first backend, in order of measured preference, that
    can do the model's class and everything in `wants`. An LP of declared block shape
    (`shaped`) that a formulation marks as interior-point work goes to a backend that solves
    that shape (`Feature.BLOCKS`); other LPs marked so to Clarabel's interior point (faster than
    HiGHS's IPM on the max-min LP, and it does not stall on large three-type ones where HiGHS's
    does: the `backends` bench rows); HiGHS leads everywhere else. A named backend is taken as
    it is."""
    if name != AUTO:
        return get_backend(name)
    needs = wants | {Feature.MILP if is_mip else Feature.LP}
    ipm_first = not is_mip and lp_method is LpMethod.IPM
    if ipm_first and shaped:
        for backend in shaped_backends():
            if wants | {Feature.BLOCKS} <= backend.features:
                return backend()
    preference = (ClarabelBackend, HighsBackend) if ipm_first else (HighsBackend, ClarabelBackend)
    for backend in preference:
        if needs <= backend.features:
            return backend()
    return HighsBackend()


def exporter() -> Backend:
    """A backend that writes models (`Feature.EXPORT`)."""
    return next(b() for b in (HighsBackend, ClarabelBackend) if Feature.EXPORT in b.features)


def get_backend(name: str) -> Backend:
    """The backend called `name`; raises KeyError for an unknown one."""
    return _FACTORIES[name]()


def capable_of(feature: Feature) -> list[str]:
    """Backends (and, where it matters, their sub-solvers) that can do `feature`, for error
    messages: `highs`, `cvxpy with solver HIGHS or SCIPY`, ..."""
    out = []
    for name in _FACTORIES:
        backend = get_backend(name)
        if feature not in backend.features:
            continue
        solvers = backend.available_solvers()
        able = [s for s in solvers if feature in backend.features_for(s)]
        if len(able) == len(solvers) or able == solvers[:1]:  # every solver, or the default
            out.append(name)
        elif able:
            out.append(f"{name} with solver {' or '.join(able)}")
    return out


__all__ = [
    "AUTO",
    "DEFAULT_BACKEND",
    "Backend",
    "Feature",
    "LpMethod",
    "OnBound",
    "OnIncumbent",
    "Scalar",
    "Session",
    "Solution",
    "SolveSettings",
    "backend_names",
    "capable_of",
    "choose_backend",
    "exporter",
    "get_backend",
]
