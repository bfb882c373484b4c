"""Time limits are honoured by every MILP-capable backend × sub-solver, and a solve stopped by
one is reported as an incumbent (FEASIBLE, a verified point) — never as optimal."""

from __future__ import annotations

import time

import pytest

from apportion.solver.backends import Feature, SolveSettings, get_backend
from apportion.solver.backends.verify import FEASIBILITY_TOLERANCE, violation
from apportion.solver.status import Status
from tests.conformance.combos import backend_solvers, pair_id
from tests.solver.backends.hard_models import market_split

LIMIT = 0.3
MILP_PAIRS = [p for p in backend_solvers(Feature.MILP) if p[0] != "auto"]
# One sub-solver per backend is enough to show the limit is passed on; HiGHS's LP methods do
# not apply to MILPs.
PAIRS = [p for p in MILP_PAIRS if p[0] != "highs" or p[1] == "choose"]


@pytest.mark.parametrize("pair", PAIRS, ids=pair_id)
def test_time_limit_returns_a_verified_incumbent(pair: tuple[str, str | None]) -> None:
    backend, solver = pair
    model = market_split(4, 40)
    started = time.perf_counter()
    solution = get_backend(backend).solve(model, SolveSettings(solver=solver, time_limit=LIMIT))
    elapsed = time.perf_counter() - started
    assert elapsed < LIMIT + 3.0, "the limit was not passed on"
    # Minimizing slack ≥ 0: only a zero-slack split could be proven optimal within the limit.
    assert solution.status is Status.FEASIBLE or (
        solution.status is Status.OPTIMAL and solution.objective == pytest.approx(0.0, abs=1e-6)
    ), solution.detail
    assert violation(model, solution.x) <= FEASIBILITY_TOLERANCE
    assert solution.objective == pytest.approx(model.cost @ solution.x + model.offset)


def test_highs_options_are_passed_on_and_checked() -> None:
    import highspy

    from apportion.solver.backends.highs import configure

    model = market_split(4, 40)
    h = highspy.Highs()
    configure(h, model, SolveSettings(tuning={"highs": {"mip_heuristic_run_rins": False}}))
    assert h.getOptionValue("mip_heuristic_run_rins")[1] is False
    with pytest.raises(ValueError, match="no_such_option"):
        configure(highspy.Highs(), model, SolveSettings(tuning={"highs": {"no_such_option": 1}}))
