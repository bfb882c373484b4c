"""Property: on random small max-min snapshots every backend × sub-solver finds the optimum
HiGHS finds (1e-6 relative), and every allocation it returns is feasible."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.solver import Status, solve
from apportion.solver.backends import Feature
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.combos import FIRST_ORDER, backend_solvers

PAIRS = [p for p in backend_solvers(Feature.LP) if p[0] != "auto"]


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, Any]:
    types = [f"t{k}" for k in range(draw(st.integers(1, 3)))]
    gpu_types = [{"name": t, "count": draw(st.integers(1, 4))} for t in types]
    speed = st.one_of(st.just(0.0), st.integers(1, 40).map(lambda v: v / 4))
    jobs = []
    for j in range(draw(st.integers(1, 6))):
        rates = {t: r for t in types if (r := draw(speed)) > 0}
        jobs.append(
            {
                "id": f"job-{j}",
                "throughput": rates,
                "scale_factor": draw(st.sampled_from([1, 1, 2, 4])),
                "weight": draw(st.sampled_from([1.0, 1.0, 2.0, 0.5])),
            }
        )
    return {"gpu_types": gpu_types, "jobs": jobs}


def _solve(snapshot: dict[str, Any], backend: str, solver: str | None) -> Any:
    options: dict[str, Any] = {"backend": backend}
    if solver is not None:
        options["solver"] = solver
    return solve(snapshot, policy="max_min_fairness", options=options)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_all_backends_agree_on_max_min(snapshot: dict[str, Any]) -> None:
    reference = _solve(snapshot, "highs", "simplex")
    assert reference.status is Status.OPTIMAL
    for backend, solver in PAIRS:
        result = _solve(snapshot, backend, solver)
        accepted = {Status.OPTIMAL}
        if (backend, solver) in FIRST_ORDER:
            accepted.add(Status.FEASIBLE)
        assert result.status in accepted, (backend, solver, result.solver.detail)
        if reference.objective is None:
            assert result.objective is None
        else:
            assert result.objective == pytest.approx(reference.objective, rel=1e-6, abs=1e-8), (
                backend,
                solver,
            )
        assert_feasible_allocation(result, snapshot)
