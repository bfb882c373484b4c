"""Every hand-solved case on every backend that can solve it: same status, same optimum."""

from __future__ import annotations

import pytest

from formulations import find_policy
from solver import Status, solve
from solver.backends import AUTO, Feature, backend_names, get_backend
from tests.conformance.case import Case, all_cases


def _runs() -> list[tuple[Case, str]]:
    runs = []
    for case in all_cases():
        policy = find_policy(case.policy)
        assert policy is not None, case.policy
        needs = Feature.MILP if policy.problem_class == "MILP" else Feature.LP
        for backend in backend_names():
            if backend == AUTO or needs in get_backend(backend).features:
                runs.append((case, backend))
    return runs


@pytest.mark.parametrize(("case", "backend"), _runs(), ids=lambda v: getattr(v, "name", v))
def test_case_on_backend(case: Case, backend: str) -> None:
    result = solve(case.snapshot, policy=case.policy, options={**case.options, "backend": backend})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(case.objective, rel=1e-6, abs=1e-9)
    if case.check is not None:
        case.check(result)
