"""Max-min fairness: hand-solved allocations, properties on random snapshots, and an independent
LP built with scipy's linprog that must reach the same optimum."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.refdata.synthetic import gavel_snapshot, random_snapshot
from apportion.solver import Status, solve
from tests.allocation_checks import assert_feasible_allocation, normalized_shares
from tests.conformance.cases_max_min import SCALE_FACTORS, TWO_BY_TWO, UNPLACEABLE, WEIGHTS
from tests.formulations.fairness.max_min_oracle import linprog_max_min, scaled_max_min


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


# Two gangs of 2 that can both run only on `a` (2 GPUs); j0 also has a throughput on `b`, where
# a gang of 2 does not fit (1 GPU). That unusable entry still counts in j0's normalizer:
# prop0 = (2·1 + 1·10)/3 = 4, prop1 = 2/3. Max-min: 2 x0 / 4 = 2 x1 / (2/3) with x0 + x1 = 1,
# so x0 = 6/7, x1 = 1/7, t = 3/7. Agnostic (T = 1 where usable, prop over every listed type):
# prop0 = 1, prop1 = 2/3: 2 x0 = 3 x1, x0 = 0.6, x1 = 0.4, t = 1.2.
MERGE_TRAP = {
    "gpu_types": [{"name": "a", "count": 2}, {"name": "b", "count": 1}],
    "jobs": [
        {"id": "j0", "scale_factor": 2, "throughput": {"a": 1.0, "b": 10.0}},
        {"id": "j1", "scale_factor": 2, "throughput": {"a": 1.0}},
    ],
}


@pytest.mark.parametrize("policy", ["max_min_fairness", "water_filling"])
def test_jobs_differing_only_on_a_type_too_small_for_their_gang_stay_apart(policy: str) -> None:
    aware = solve(MERGE_TRAP, policy=policy)
    assert aware.status is Status.OPTIMAL
    assert aware.objective == pytest.approx(3 / 7)
    assert aware.job("j0").allocation["a"] == pytest.approx(6 / 7)
    assert aware.job("j1").allocation["a"] == pytest.approx(1 / 7)
    agnostic = solve(MERGE_TRAP, policy=policy, options={"heterogeneity_aware": False})
    assert agnostic.objective == pytest.approx(1.2)
    assert agnostic.job("j0").allocation["a"] == pytest.approx(0.6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), aware=st.booleans())
def test_merging_never_joins_jobs_the_lp_tells_apart(seed: int, aware: bool) -> None:
    """Random twins: copies of one job that differ only on a type their gang does not fit."""
    rng = np.random.default_rng(seed)
    types = [{"name": f"g{k}", "count": int(c)} for k, c in enumerate(rng.integers(1, 5, 3))]
    small = min(types, key=lambda g: g["count"])
    jobs = []
    for i in range(int(rng.integers(2, 6))):
        scale = small["count"] + 1
        base = {g["name"]: float(rng.uniform(0.5, 5)) for g in types if g["count"] >= scale}
        for copy in range(int(rng.integers(1, 4))):
            extra = {small["name"]: float(rng.uniform(0.1, 50))} if copy else {}
            jobs.append(
                {"id": f"j{i}-{copy}", "scale_factor": scale, "throughput": {**base, **extra}}
            )
    snapshot = {"gpu_types": types, "jobs": jobs}
    merged = solve(snapshot, options={"heterogeneity_aware": aware})
    plain = solve(snapshot, options={"heterogeneity_aware": aware, "merge_identical": False})
    if plain.objective is None:
        assert merged.objective is None
        return
    assert merged.objective == pytest.approx(plain.objective, rel=1e-6)
    assert merged.objective == pytest.approx(linprog_max_min(snapshot, aware), rel=1e-6)


# Shares far below a solver's tolerance (FORMULATIONS §1; the reproducer of the "tiny optima"
# defect): j0's gang fits only `a`, where it makes 0.001 steps/s against a normalizer of
# (2·0.001 + 10000)/3, with weight 1000: u0 = 2·0.001 x0 / (1000 · 3333.3) = 6e-10 x0. j1 needs
# x1 = 4e-10 of `a` to match, which costs j0 2e-10 of its time: t ≈ 6.0e-10, x0 ≈ 1.
TINY = {
    "gpu_types": [{"name": "a", "count": 2}, {"name": "b", "count": 1}],
    "jobs": [
        {"id": "j0", "scale_factor": 2, "weight": 1000.0, "throughput": {"a": 0.001, "b": 1e4}},
        {"id": "j1", "scale_factor": 1, "weight": 1.0, "throughput": {"a": 1.0}},
    ],
}


@pytest.mark.parametrize("backend", ["highs", "clarabel", "cvxpy", "pulp"])
@pytest.mark.parametrize("policy", ["max_min_fairness", "water_filling"])
def test_tiny_optimum_is_found_not_called_zero(policy: str, backend: str) -> None:
    result = solve(TINY, policy=policy, options={"backend": backend})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(6.0e-10, rel=1e-3)
    assert result.objective == pytest.approx(scaled_max_min(TINY), rel=1e-6)
    x = assert_feasible_allocation(result, TINY)
    assert x[0, 0] == pytest.approx(1.0, abs=1e-8) and x[1, 0] > 0


def test_tiny_optimum_with_space_sharing_on() -> None:
    result = solve(TINY, options={"space_sharing": True})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(scaled_max_min(TINY), rel=1e-6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), policy=st.sampled_from(["max_min_fairness", "water_filling"]))
def test_shares_near_1e_9_are_exact(seed: int, policy: str) -> None:
    """Ordinary jobs next to heavy ones whose shares are 1e-12–1e-6: weights to 1e3,
    throughputs to 1e-3 on the only type their gang fits, large normalizers elsewhere."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 5, 3)
    k = int(rng.integers(3))
    counts[k] = counts.max() + 1  # only type k fits the heavy gangs
    types = [{"name": f"g{g}", "count": int(c)} for g, c in enumerate(counts)]
    jobs = [
        {"id": f"n{i}", "throughput": {g["name"]: float(rng.uniform(0.5, 5)) for g in types}}
        for i in range(int(rng.integers(1, 5)))
    ]
    for i in range(int(rng.integers(1, 3))):
        jobs.append(
            {
                "id": f"h{i}",
                "scale_factor": int(counts[k]),
                "weight": float(10 ** rng.uniform(0, 3)),
                "throughput": {
                    g["name"]: float(
                        10 ** rng.uniform(-3, -1) if j == k else 10 ** rng.uniform(3, 4)
                    )
                    for j, g in enumerate(types)
                },
            }
        )
    snapshot = {"gpu_types": types, "jobs": jobs}
    result = solve(snapshot, policy=policy)
    assert result.status is Status.OPTIMAL
    assert result.objective is not None and result.objective > 0
    assert result.objective == pytest.approx(scaled_max_min(snapshot), rel=1e-6)
    shares = normalized_shares(assert_feasible_allocation(result, snapshot), snapshot)
    assert shares.min() >= result.objective * (1 - 1e-6)
    assert result.objective < 1e-3  # the regime this test is for (typically 1e-10–1e-6)
