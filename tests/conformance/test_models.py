"""The model-level table on every backend × sub-solver: one status vocabulary, the same optimum,
feasible points, and the same duals (∂objective/∂bound) wherever a backend gives duals."""

from __future__ import annotations

import pytest

from apportion.solver.backends import Feature, SolveSettings, get_backend
from apportion.solver.backends.verify import FEASIBILITY_TOLERANCE, violation
from apportion.solver.status import Status
from tests.conformance.combos import FIRST_ORDER, backend_solvers, pair_id
from tests.conformance.models import MODEL_CASES, ModelCase

RUNS = [
    pytest.param(case, pair, id=f"{case.name}-{pair_id(pair)}")
    for case in MODEL_CASES
    for pair in backend_solvers()
    if pair[0] != "auto"
]


@pytest.mark.parametrize(("case", "pair"), RUNS)
def test_model_case(case: ModelCase, pair: tuple[str, str | None]) -> None:
    backend_name, solver = pair
    backend = get_backend(backend_name)
    model = case.build()
    if model.is_mip and Feature.MILP not in backend.features_for(solver):
        # A backend that says it has no MILP must refuse one, not solve the relaxation.
        with pytest.raises(ValueError, match=r"MILP|continuous"):
            backend.solve(model, SolveSettings(solver=solver))
        return
    solution = backend.solve(model, SolveSettings(solver=solver))
    expected = {case.status}
    if pair in FIRST_ORDER and case.status is Status.OPTIMAL:
        expected.add(Status.FEASIBLE)
    assert solution.status in expected, solution.detail
    assert solution.backend == backend_name
    if not solution.status.has_solution:
        assert solution.objective is None
        return
    assert solution.objective == pytest.approx(case.objective, rel=1e-6, abs=1e-6)
    assert violation(model, solution.x) <= FEASIBILITY_TOLERANCE
    # The objective is the point's, not a number the solver printed.
    assert model.cost @ solution.x + model.offset == pytest.approx(solution.objective, abs=1e-9)
    if model.is_mip or solution.status is not Status.OPTIMAL:
        return
    if Feature.DUALS in backend.features_for(solver) and case.duals:
        assert solution.row_dual is not None
        for block, values in case.duals.items():
            got = solution.dual(model.block(block))
            assert got == pytest.approx(values, abs=1e-5), block
