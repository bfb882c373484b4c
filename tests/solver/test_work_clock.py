"""`clock: "work"`: a time limit counted in solver work, never read from the clock, so a
limited solve gives the same answer every time; the wall clock stays the default."""

from __future__ import annotations

import time

import numpy as np
import pytest

from apportion.solver.backends.work import MIP_NODE, UNITS_PER_SECOND
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Model, Sense
from apportion.solver.options import SolveOptions
from apportion.solver.status import Status, Termination


def _market_split(rows: int = 4, columns: int = 40) -> Model:
    """A x + s⁺ − s⁻ = ⌊A·1 / 2⌋, x binary, minimize Σ s: far more branch and bound than any
    limit here allows, and a feasible point (any x, with slacks) is trivial."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 100, size=(rows, columns)).astype(float)
    b = np.floor(a.sum(axis=1) / 2)
    m = Model("market_split")
    x = m.add_variables("x", columns, upper=1.0, integer=True)
    over, under = m.add_variables("over", rows), m.add_variables("under", rows)
    m.add_constraints("split", {x: a, over: np.eye(rows), under: -np.eye(rows)}, lower=b, upper=b)
    m.set_objective({over: 1.0, under: 1.0}, Sense.MINIMIZE)
    return m


def _work_context(seconds: float) -> SolveContext:
    return SolveContext.for_request(
        SolveOptions.model_validate({"time_limit": seconds, "clock": "work"})
    )


def test_a_work_limited_milp_stops_at_its_work_and_gives_the_same_answer_twice() -> None:
    answers = []
    for _ in range(2):
        ctx = _work_context(0.5)
        solution = ctx.solve(SolveRequest(_market_split()))
        answers.append(solution)
        # Stopped by the count, not proven; its work is all the budget ever saw.
        assert solution.termination in (Termination.ITERATION_LIMIT, Termination.SOLUTION_LIMIT)
        assert solution.status is not Status.OPTIMAL
        assert ctx.budget.elapsed() == pytest.approx(solution.work / UNITS_PER_SECOND)
        assert ctx.budget.spent()
        assert ctx.budget.termination is Termination.ITERATION_LIMIT
    first, second = answers
    assert first.status is second.status and first.objective == second.objective
    assert np.array_equal(first.x, second.x)
    assert first.work == second.work and first.iterations == second.iterations


def test_a_work_limit_becomes_iteration_and_node_limits_and_no_time_limit() -> None:
    ctx = _work_context(2.0)
    settings = ctx.settings()
    assert settings.time_limit is None
    assert settings.work_limit == pytest.approx(2.0 * UNITS_PER_SECOND)
    # A formulation's own cap below the budget is counted the same way.
    assert ctx.settings(time_limit=0.5).work_limit == pytest.approx(0.5 * UNITS_PER_SECOND)
    import highspy

    from apportion.solver.backends.highs import configure

    h = highspy.Highs()  # type: ignore[no-untyped-call]
    configure(h, _market_split().compile(), settings)
    assert h.getOptionValue("time_limit")[1] == float("inf")
    assert h.getOptionValue("mip_max_nodes")[1] == int(2.0 * UNITS_PER_SECOND // MIP_NODE)


def test_the_work_clock_does_not_move_while_nothing_is_counted() -> None:
    ctx = _work_context(1.0)
    time.sleep(0.05)
    assert ctx.budget.elapsed() == 0.0 and ctx.budget.left() == 1.0
    ctx.budget.step(10)
    assert ctx.budget.elapsed() > 0.0
    # A share of it keeps counting on the same clock.
    part = ctx.budget.within(0.25)
    part.charge(0.25 * UNITS_PER_SECOND)
    assert part.spent() and not ctx.budget.spent()


def test_the_wall_clock_stays_the_default() -> None:
    options = SolveOptions.model_validate({"time_limit": 3.0})
    assert options.clock == "wall"
    ctx = SolveContext.for_request(options)
    settings = ctx.settings()
    assert settings.work_limit is None
    assert settings.time_limit is not None and 0 < settings.time_limit <= 3.0
    assert ctx.budget.termination is Termination.TIME_LIMIT
