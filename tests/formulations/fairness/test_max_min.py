"""Max-min fairness: hand-solved allocations, properties on random snapshots, and an independent
LP built with scipy's linprog that must reach the same optimum."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from refdata.synthetic import gavel_snapshot, random_snapshot
from solver import Status, solve
from tests.allocation_checks import assert_feasible_allocation, normalized_shares
from tests.conformance.cases_max_min import SCALE_FACTORS, TWO_BY_TWO, UNPLACEABLE, WEIGHTS


def linprog_max_min(snapshot: dict[str, Any], aware: bool = True) -> float:
    """FORMULATIONS §1 written out densely, without any of apportion's code."""
    names = [g["name"] for g in snapshot["gpu_types"]]
    n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = snapshot["jobs"]
    t = np.array([[j.get("throughput", {}).get(k, 0.0) for k in names] for j in jobs])
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    w = np.array([j.get("weight", 1.0) for j in jobs], dtype=float)
    usable = (t > 0) & (s[:, None] <= n[None, :])
    if not aware:
        t = (t > 0).astype(float)
    keep = usable.any(axis=1)
    t, s, w, usable = t[keep], s[keep], w[keep], usable[keep]
    m, k = t.shape
    prop = t @ n / n.sum()
    nv = m * k + 1  # x (row-major) then the level
    a_ub, b_ub = [], []
    for j in range(m):
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = -s[j] * t[j] / (w[j] * prop[j])
        row[-1] = 1.0
        a_ub.append(row), b_ub.append(0.0)
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = 1.0
        a_ub.append(row), b_ub.append(1.0)
    for g in range(k):
        row = np.zeros(nv)
        row[g : m * k : k] = s
        a_ub.append(row), b_ub.append(n[g])
    bounds = [(0, 1 if usable[j, g] else 0) for j in range(m) for g in range(k)] + [(0, None)]
    c = np.zeros(nv)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun)


def test_two_jobs_two_types_hand_solved() -> None:
    result = solve(TWO_BY_TWO)
    x = assert_feasible_allocation(result, TWO_BY_TWO)
    # Both jobs end at the same share t = 1 (see the case's derivation).
    assert normalized_shares(x, TWO_BY_TWO) == pytest.approx([1.0, 1.0], abs=1e-7)
    assert result.objective == pytest.approx(1.0)
    assert [g.used for g in result.gpu_types] == pytest.approx([1.0, 1.0])


def test_weights_give_proportional_time() -> None:
    result = solve(WEIGHTS)
    assert result.job("a").allocation["v100"] == pytest.approx(1 / 3)
    assert result.job("b").allocation["v100"] == pytest.approx(2 / 3)


def test_scale_factors_count_gpu_time() -> None:
    result = solve(SCALE_FACTORS)
    assert result.objective == pytest.approx(2 / 3)
    # u_j = s_j x_j = 2/3 for every job: the single-GPU job gets twice the wide jobs' time.
    assert result.job("a").allocation["v100"] == pytest.approx(2 / 3)
    assert result.job("b").allocation["v100"] == pytest.approx(1 / 3)


def test_jobs_that_cannot_run_are_listed_with_a_reason() -> None:
    result = solve(UNPLACEABLE)
    assert [j.id for j in result.jobs] == ["a", "nowhere", "too-wide"]
    assert result.job("a").allocation == pytest.approx({"v100": 1.0})
    assert "no positive throughput" in (result.job("nowhere").reason or "")
    assert "scale factor 4 exceeds" in (result.job("too-wide").reason or "")
    assert result.job("too-wide").allocation == {}


def test_no_runnable_job_is_an_empty_optimal_answer() -> None:
    data = {"gpu_types": [{"name": "v100", "count": 1}], "jobs": [{"id": "z"}]}
    result = solve(data)
    assert result.status is Status.OPTIMAL and result.objective is None
    assert result.job("z").reason


def test_agnostic_variant_ignores_speed_differences() -> None:
    # One GPU each of a fast and a slow type, two identical jobs 10× faster on v100: the agnostic
    # policy equalizes time (shares of 1 each), the aware one equalizes effective throughput.
    data = {
        "gpu_types": [{"name": "k80", "count": 1}, {"name": "v100", "count": 1}],
        "jobs": [{"id": i, "throughput": {"k80": 1.0, "v100": 10.0}} for i in "ab"],
    }
    aware = solve(data)
    agnostic = solve(data, options={"heterogeneity_aware": False})
    assert agnostic.objective == pytest.approx(1.0)
    assert aware.objective == pytest.approx(1.0)
    effs = [j.effective_throughput for j in aware.jobs]
    assert effs[0] == pytest.approx(effs[1])


snapshots = st.builds(
    random_snapshot,
    num_jobs=st.integers(1, 12),
    num_types=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    gpus_per_type=st.integers(1, 6),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshot=snapshots, aware=st.booleans())
def test_random_snapshots_constraints_objective_and_independent_optimum(
    snapshot: dict[str, Any], aware: bool
) -> None:
    result = solve(snapshot, options={"heterogeneity_aware": aware})
    assert result.status is Status.OPTIMAL
    x = assert_feasible_allocation(result, snapshot)
    shares = normalized_shares(x, snapshot, aware)
    counts = {g["name"]: g["count"] for g in snapshot["gpu_types"]}
    runnable = np.array(
        [
            any(v > 0 and j.get("scale_factor", 1) <= counts[k] for k, v in j["throughput"].items())
            for j in snapshot["jobs"]
        ]
    )
    if not runnable.any():
        assert result.objective is None
        return
    assert result.objective == pytest.approx(shares[runnable].min(), rel=1e-7, abs=1e-9)
    assert result.objective == pytest.approx(linprog_max_min(snapshot, aware), rel=1e-6)


@pytest.mark.parametrize("backend", ["highs", "clarabel"])
def test_merging_identical_jobs_keeps_the_optimum(backend: str) -> None:
    snapshot = gavel_snapshot(300, seed=4)
    merged = solve(snapshot, options={"backend": backend})
    plain = solve(snapshot, options={"backend": backend, "merge_identical": False})
    assert merged.solver.merged_groups is not None and merged.solver.merged_groups < 100
    assert merged.objective == pytest.approx(plain.objective, rel=1e-6)
    assert_feasible_allocation(merged, snapshot)
    assert_feasible_allocation(plain, snapshot)


def test_real_gavel_fixture_is_fair_and_full(gavel_physical: dict[str, Any]) -> None:
    result = solve(gavel_physical)
    x = assert_feasible_allocation(result, gavel_physical)
    shares = normalized_shares(x, gavel_physical)
    assert result.objective == pytest.approx(shares.min(), rel=1e-7)
    assert result.objective == pytest.approx(linprog_max_min(gavel_physical), rel=1e-6)
    # Work-conserving at the optimum here: every type is fully used.
    assert all(g.utilization == pytest.approx(1.0, abs=1e-6) for g in result.gpu_types)
