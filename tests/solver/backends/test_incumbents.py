"""A MILP's improving solutions reach `on_incumbent` as feasible points with a valid bound, its
dual bound reaches `on_bound` as the search goes, and either callback can stop the solve;
backends without the feature leave them alone."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from apportion.solver.backends import Feature, SolveSettings, get_backend
from apportion.solver.backends.verify import FEASIBILITY_TOLERANCE, violation
from apportion.solver.status import Status
from tests.solver.backends.hard_models import market_split

LIMIT = 20.0


def test_each_incumbent_is_feasible_improving_and_above_its_bound() -> None:
    model = market_split(3, 16)  # solved to optimality through a dozen incumbents
    seen: list[tuple[NDArray[np.float64], float]] = []

    def record(x: NDArray[np.float64], bound: float) -> bool:
        seen.append((x.copy(), bound))
        return False

    solution = get_backend("highs").solve(
        model, SolveSettings(time_limit=LIMIT, on_incumbent=record)
    )
    assert seen, "no incumbent was reported"
    values = [float(model.cost @ x + model.offset) for x, _ in seen]
    for (x, bound), value in zip(seen, values, strict=True):
        assert violation(model, x) <= FEASIBILITY_TOLERANCE
        assert value >= bound - 1e-9  # minimizing: the dual bound is below every point
    assert values == sorted(values, reverse=True)  # each one improves on the last
    assert solution.status is Status.OPTIMAL
    assert solution.objective == pytest.approx(values[-1])


def test_the_callback_stops_the_solve_at_the_incumbent_it_accepts() -> None:
    model = market_split(4, 40)  # far from provable within the limit
    seen: list[float] = []

    def first(x: NDArray[np.float64], bound: float) -> bool:
        seen.append(float(model.cost @ x + model.offset))
        return True

    solution = get_backend("highs").solve(
        model, SolveSettings(time_limit=LIMIT, on_incumbent=first)
    )
    assert solution.status is Status.FEASIBLE
    assert "interrupt" in solution.detail.lower()  # stopped by the callback, not the limit
    assert solution.objective == pytest.approx(min(seen))


def test_each_reported_bound_is_valid_and_never_loosens() -> None:
    model = market_split(3, 16)
    bounds: list[float] = []

    def record(bound: float) -> bool:
        bounds.append(bound)
        return False

    solution = get_backend("highs").solve(model, SolveSettings(time_limit=LIMIT, on_bound=record))
    assert solution.status is Status.OPTIMAL and solution.objective is not None
    assert bounds and all(np.isfinite(bounds))
    assert max(bounds) <= solution.objective + 1e-9  # minimizing: below the optimum
    assert bounds == sorted(bounds)


def test_the_bound_callback_stops_the_solve() -> None:
    model = market_split(4, 40)  # far from provable within the limit
    calls: list[float] = []

    def enough(bound: float) -> bool:
        calls.append(bound)
        return len(calls) == 3

    solution = get_backend("highs").solve(model, SolveSettings(time_limit=LIMIT, on_bound=enough))
    assert "interrupt" in solution.detail.lower()  # stopped by the callback, not the limit
    assert len(calls) == 3


def test_only_highs_offers_incumbents() -> None:
    assert Feature.INCUMBENTS in get_backend("highs").features
    assert Feature.INCUMBENTS not in get_backend("pulp").features_for(None)
