"""Every hand-solved policy case on every backend × sub-solver that can solve it: same status,
same optimum (1e-6 relative), and a feasible allocation (each case's own check)."""

from __future__ import annotations

import pytest

from apportion.solver import Status, solve
from apportion.solver.backends import Feature
from apportion.solver.registry import find_policy
from tests.conformance.case import Case, all_cases
from tests.conformance.combos import FIRST_ORDER, SPLITTING, backend_solvers, pair_id


def _runs() -> list[object]:
    runs = []
    for case in all_cases():
        policy = find_policy(case.policy)
        assert policy is not None, case.policy
        if policy.problem_class == "algorithm":
            # No model to hand to a backend: one run checks the hand-solved answer.
            runs.append(pytest.param(case, ("auto", None), id=f"{case.name}-algorithm"))
            continue
        needs = Feature.MILP if "MILP" in policy.problem_class.upper() else Feature.LP
        for pair in backend_solvers(needs):
            if policy.problem_class == "LP sequence" and pair in FIRST_ORDER:
                continue  # needs certified optima per step; see test_first_order_sequence_is_error
            runs.append(pytest.param(case, pair, id=f"{case.name}-{pair_id(pair)}"))
    return runs


@pytest.mark.parametrize(("case", "pair"), _runs())
def test_case_on_backend(case: Case, pair: tuple[str, str | None]) -> None:
    backend, solver = pair
    options = {**case.options, "backend": backend}
    if solver is not None:
        options["solver"] = solver
    result = solve(case.snapshot, policy=case.policy, options=options)
    inexact = pair in FIRST_ORDER or (case.ill_conditioned and pair in SPLITTING)
    accepted = {Status.OPTIMAL, Status.FEASIBLE} if inexact else {Status.OPTIMAL}
    assert result.status in accepted, result.solver.detail
    assert result.objective == pytest.approx(case.objective, rel=1e-6, abs=case.abs_tol)
    if backend != "auto":
        assert result.solver.backend == backend
        ran = result.solver.solver.lower()
        # HiGHS's sub-solvers pick the LP algorithm; a MILP always runs its branch-and-cut ("mip").
        assert ran == (solver or ran).lower() or (backend == "highs" and ran == "mip")
    if case.check is not None:
        case.check(result)


def test_first_order_sequence_is_error() -> None:
    """Water filling on a first-order solver (no certified optimum) refuses to guess levels."""
    case = next(c for c in all_cases() if c.policy == "water_filling")
    backend, solver = next(iter(FIRST_ORDER))
    result = solve(
        case.snapshot, policy=case.policy, options={"backend": backend, "solver": solver}
    )
    assert result.status is Status.ERROR and result.objective is None
    assert any("optimality" in w for w in result.warnings)
