"""HiGHS and Clarabel map their own outcomes onto one status vocabulary, with the same optimum."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.solver.backends import LpMethod, SolveSettings, get_backend
from apportion.solver.model import Model, Sense
from apportion.solver.status import Status

LP_BACKENDS = ["highs", "clarabel"]


def small_lp(rhs: float = 5.0) -> Model:
    """max x + 2y s.t. x + y ≤ rhs, 0 ≤ x, y ≤ 4: optimum y = 4, x = rhs − 4 (rhs ∈ [4, 8])."""
    model = Model("lp")
    v = model.add_variables("v", 2, upper=4.0)
    model.add_constraints("sum", {v: np.ones((1, 2))}, upper=rhs)
    model.set_objective({v: [1.0, 2.0]}, Sense.MAXIMIZE)
    return model


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_lp_optimum_and_dual(backend: str) -> None:
    solution = get_backend(backend).solve(small_lp().compile(), SolveSettings())
    assert solution.status is Status.OPTIMAL
    assert solution.objective == pytest.approx(9.0, rel=1e-7)
    assert solution.x == pytest.approx([1.0, 4.0], abs=1e-6)
    # Relaxing the row by one unit buys one more x: the dual is 1.
    assert solution.row_dual is not None
    assert solution.row_dual[0] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_infeasible_lp(backend: str) -> None:
    model = small_lp()
    v = model.variables[0]
    model.add_constraints("too_much", {v: np.ones((1, 2))}, lower=10.0)
    assert get_backend(backend).solve(model.compile(), SolveSettings()).status is Status.INFEASIBLE


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_unbounded_lp(backend: str) -> None:
    model = Model("u")
    v = model.add_variables("v", 1)
    model.set_objective({v: 1.0}, Sense.MAXIMIZE)
    assert get_backend(backend).solve(model.compile(), SolveSettings()).status is Status.UNBOUNDED


def test_highs_mip_respects_integrality() -> None:
    """max x + 2y, x + y ≤ 5.5, x, y ∈ {0..4} integer: y = 4, x = 1, objective 9."""
    model = Model("mip")
    v = model.add_variables("v", 2, upper=4.0, integer=True)
    model.add_constraints("sum", {v: np.ones((1, 2))}, upper=5.5)
    model.set_objective({v: [1.0, 2.0]}, Sense.MAXIMIZE)
    solution = get_backend("highs").solve(model.compile(), SolveSettings())
    assert solution.status is Status.OPTIMAL
    assert solution.x.tolist() == [1.0, 4.0]
    assert solution.mip_gap == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("method", [LpMethod.SIMPLEX, LpMethod.IPM])
def test_highs_methods_agree(method: LpMethod) -> None:
    solution = get_backend("highs").solve(small_lp(6.0).compile(), SolveSettings(lp_method=method))
    assert solution.status is Status.OPTIMAL and solution.objective == pytest.approx(10.0)


def test_exhausted_time_limit_without_a_point_is_time_limit() -> None:
    from apportion.formulations.fairness.share_input import Entities, share_input
    from apportion.formulations.fairness.share_lp import LevelState, build_share_lp
    from apportion.refdata.synthetic import random_snapshot
    from apportion.solver.arrays import ClusterArrays
    from apportion.solver.snapshot import parse_snapshot

    snapshot = parse_snapshot(random_snapshot(300, 3, seed=1))
    problem = ClusterArrays.from_snapshot(snapshot)
    single = Entities.single(problem.num_jobs)
    s = share_input(snapshot, problem, problem.throughput, single, merge=False).structure
    assert s is not None
    state = LevelState(s.weight, np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size))
    model, _ = build_share_lp(s, state, single=True)
    for backend in LP_BACKENDS:
        settings = SolveSettings(time_limit=1e-6, lp_method=LpMethod.IPM)
        solution = get_backend(backend).solve(model.compile(), settings)
        assert solution.status is Status.TIME_LIMIT
        assert not solution.status.has_solution
