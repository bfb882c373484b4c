"""Finish-time fairness (FORMULATIONS §3): hand-solved ρ, bisection oracle, definitions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.cases_objectives import FTF, FTF_GANGS, FTF_ISOLATED
from tests.formulations.fairness.lp_oracle import Cluster, bisect, random_snapshot

# One GPU, two new jobs with 1 step at 1 step/s: m = 2, x_iso = 1/2, iso = 1/2, D = 2. ρ_j =
# (1/eff_j)/2 and eff_a + eff_b ≤ 1, so the best is eff = 1/2 each: ρ = 1 (the equal share).
EQUAL = {
    "gpu_types": [{"name": "v100", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 1},
        {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 1},
    ],
}


def test_new_jobs_on_equal_shares_have_rho_one() -> None:
    result = solve(EQUAL, policy="finish_time_fairness")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.0, rel=1e-9)
    assert [j.metrics["rho"] for j in result.jobs] == pytest.approx([1.0, 1.0], rel=1e-9)
    assert result.summary["relative_gap"] <= 1e-6


def test_job_with_history_hand_solved() -> None:
    # a started 1 s ago and did 0.5 isolated-seconds of work: D_a = 0.5 + 1/0.5 = 2.5 and
    # ρ_a = (1 + 1/x)/2.5; b is new: ρ_b = 1/(2(1 − x)) with x = eff_a. Equal at the optimum:
    # (1 + 1/x)(1 − x) = 1.25 ⟺ x² + 1.25x − 1 = 0, x = (√5.5625 − 1.25)/2.
    snapshot = FTF
    x = (math.sqrt(5.5625) - 1.25) / 2
    result = solve(snapshot, policy="ftf")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1 / (2 * (1 - x)), rel=1e-9)
    assert result.job("a").allocation["v100"] == pytest.approx(x, rel=1e-7)


def test_isolated_share_counts_scale_factor_and_caps_at_all_the_time() -> None:
    # 4 GPUs, two jobs: the gang of 2 gets x_iso = (4/2)/2 = 1, the single job (4/2)/1 = 2 → capped
    # at 1. Both iso = T, D_j = R_j/T_j. Giving each all the time (2 + 1 ≤ 4 GPUs) makes ρ = 1,
    # and nothing beats running all the time on the only type: ρ* = 1.
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 4}],
        "jobs": [
            {"id": "gang", "scale_factor": 2, "throughput": {"v100": 2}, "steps_remaining": 4},
            {"id": "one", "throughput": {"v100": 1}, "steps_remaining": 1},
        ],
    }
    result = solve(snapshot, policy="finish_time_fairness")
    assert result.objective == pytest.approx(1.0, rel=1e-9)
    assert_feasible_allocation(result, snapshot)


def test_missing_steps_is_an_input_error() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [{"id": "a", "throughput": {"v100": 1}}],
    }
    with pytest.raises(InputError) as info:
        solve(snapshot, policy="finish_time_fairness")
    assert info.value.errors[0].loc == ("snapshot", "jobs", 0, "steps_remaining")


def _terms(snapshot: dict, cluster: Cluster) -> tuple[np.ndarray, np.ndarray]:
    """τ_j, r_j computed from the definitions, independently of the solver."""
    m = len(snapshot["jobs"])
    share = np.where(cluster.t > 0, (cluster.n / m)[None, :] / cluster.s[:, None], 0.0)
    share /= np.maximum(share.sum(axis=1, keepdims=True), 1.0)
    iso = (cluster.t * share).sum(axis=1)
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    since = np.array([j.get("time_since_start", 0.0) for j in snapshot["jobs"]])
    done = np.array([j.get("isolated_time_done", 0.0) for j in snapshot["jobs"]])
    d = done + steps / iso
    return since / d, steps / d


@pytest.mark.parametrize("seed", range(8))
def test_equals_bisection_over_feasibility_lps(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    snapshot = random_snapshot(rng, int(rng.integers(2, 6)), int(rng.integers(1, 4)))
    for job in snapshot["jobs"]:
        if rng.random() < 0.6:
            job["time_since_start"] = float(rng.uniform(0, 50))
            job["isolated_time_done"] = float(rng.uniform(0, 50))
    cluster = Cluster.of(snapshot)
    tau, rate = _terms(snapshot, cluster)

    def feasible(rho: float) -> bool:
        return rho > tau.max() and cluster.feasible(rate / (rho - tau))

    optimum = bisect(feasible, float(tau.max()), 1e3)
    result = solve(snapshot, policy="finish_time_fairness")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    x = assert_feasible_allocation(result, snapshot)
    rho = tau + rate / (cluster.t * x).sum(axis=1)
    assert rho.max() == pytest.approx(result.objective, rel=1e-9)
    assert [j.metrics["rho"] for j in result.jobs] == pytest.approx(rho, rel=1e-9)


DATA = Path(__file__).parent / "data"


def _rho_by_work_fractions(snapshot: dict) -> float:
    """ρ* by bisection over feasibility LPs in work fractions (any magnitudes), over the jobs
    the policy serves (runnable, steps left), with τ and r from the definitions."""
    cluster = Cluster.of(snapshot)
    steps = np.array([j.get("steps_remaining", 0.0) for j in snapshot["jobs"]])
    keep = (cluster.t.max(axis=1) > 0) & (steps > 0)
    kept = {**snapshot, "jobs": [j for j, k in zip(snapshot["jobs"], keep, strict=True) if k]}
    cluster = Cluster.of(kept)
    tau, rate = _terms(kept, cluster)
    top = float((tau + rate / cluster.t.max(axis=1)).max())  # each job alone: a lower bound

    def feasible(rho: float) -> bool:
        return rho > tau.max() and cluster.feasible_work(rate / (rho - tau))

    return bisect(feasible, float(tau.max()), 1e3 * top, 1e-10)


def test_large_rho_converges_to_the_exact_optimum() -> None:
    """The test vector where the tangent steps stopped at 40 rounds (ρ 991.3394 against an
    exact 990.5395)."""
    snapshot = json.loads((DATA / "ftf_large_rho.json").read_text())
    result = solve(snapshot, policy="finish_time_fairness")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(990.5395, rel=1e-6)
    assert result.objective == pytest.approx(_rho_by_work_fractions(snapshot), rel=1e-6)
    assert result.summary["relative_gap"] <= 1e-6
    assert result.summary["rounds"] < 40


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_jobs_far_past_their_isolated_finish_have_rho_near_1e3(seed: int) -> None:
    """Jobs that have run far longer than the work left would take (t_j ≫ R_j / eff), so
    ρ ≈ 1e2–1e3, next to new ones."""
    rng = np.random.default_rng(seed)
    snapshot = random_snapshot(rng, int(rng.integers(2, 6)), int(rng.integers(1, 4)))
    for job in snapshot["jobs"]:
        if rng.random() < 0.6:
            job["time_since_start"] = float(10 ** rng.uniform(3, 4.5))
            job["isolated_time_done"] = float(rng.uniform(0, 20))
            job["steps_remaining"] = float(rng.uniform(0.5, 20))
    result = solve(snapshot, policy="finish_time_fairness")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(_rho_by_work_fractions(snapshot), rel=1e-6)
    x = assert_feasible_allocation(result, snapshot)
    assert x.sum() > 0


@pytest.mark.parametrize(("isolated_share", "rho"), [("usable", 1.0), ("gavel", 0.75)])
def test_isolated_share_definitions_hand_solved(isolated_share: str, rho: float) -> None:
    """FTF_ISOLATED's derivation: Gavel's isolated share credits b half of the k80s, where it
    makes no progress, so b's isolated throughput halves and so does its ρ."""
    result = solve(
        FTF_ISOLATED, policy="finish_time_fairness", options={"isolated_share": isolated_share}
    )
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(rho, rel=1e-7)
    assert_feasible_allocation(result, FTF_ISOLATED)
    if isolated_share == "gavel":
        assert result.job("a").allocation == pytest.approx({"v100": 1.0}, rel=1e-7)
        assert result.job("b").metrics["rho"] <= 0.75 * (1 + 1e-7)


def gavel_isolated(snapshot: dict) -> np.ndarray:
    """Gavel's isolated.py written out for the jobs the policy serves (runnable, steps left):
    x_jk = (N_k / m) / s_j on every type, each row divided by max(1, its own sum), and
    iso_j = Σ_k T_jk x_jk with T as given (0 where the job has none)."""
    names = [g["name"] for g in snapshot["gpu_types"]]
    n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = snapshot["jobs"]
    t = np.array([[j["throughput"].get(k, 0.0) for k in names] for j in jobs])
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    m = len(jobs)
    x = (n / m)[None, :] / s[:, None]
    x /= np.maximum(x.sum(axis=1, keepdims=True), 1.0)
    return np.asarray((t * x).sum(axis=1))


# The reproduction: one type of 6 GPUs, four new jobs with T = 1 and scale factors 1, 2, 2, 2
# (m = 4). Gavel's rows: 6/4 = 1.5 for the single job, capped at 1; 6/(4·2) = 0.75 for each
# gang, which stands. So iso = (1, 0.75, 0.75, 0.75) and ρ_j = iso_j / eff_j. The single job
# cannot beat eff 1: ρ* ≥ 1, and ρ = 1 fits (1 + 3 · 2 · 0.75 = 5.5 ≤ 6 GPUs). (Dividing every
# row by the largest sum gave the gangs 0.5 and ρ 0.667.) The usable types' isolated share is
# the same here and already optimal, so no LP runs: a unit test, not a conformance case.
GANGS = {
    "gpu_types": [{"name": "v100", "count": 6}],
    "jobs": [
        {"id": job, "scale_factor": scale, "throughput": {"v100": 1}, "steps_remaining": 100}
        for job, scale in (("a", 1), ("b", 2), ("c", 2), ("d", 2))
    ],
}


def test_gavel_isolated_share_is_each_row_capped_at_all_the_time() -> None:
    np.testing.assert_allclose(gavel_isolated(GANGS), [1.0, 0.75, 0.75, 0.75])
    result = solve(GANGS, policy="finish_time_fairness", options={"isolated_share": "gavel"})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.0, rel=1e-9)
    x = assert_feasible_allocation(result, GANGS)
    # New jobs: ρ_j = iso_j / eff_j, so the isolated throughput the policy used is ρ_j · eff_j.
    rho = np.array([j.metrics["rho"] for j in result.jobs])
    np.testing.assert_allclose(rho * x[:, 0], [1.0, 0.75, 0.75, 0.75], rtol=1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_gavel_isolated_share_equals_bisection_with_gavels_definition(seed: int) -> None:
    """Property: on small random clusters (mixed scale factors, over- and under-subscribed),
    ρ* is the bisection optimum over feasibility LPs with iso from Gavel's definition above."""
    rng = np.random.default_rng(700 + seed)
    snapshot = random_snapshot(rng, int(rng.integers(3, 10)), int(rng.integers(1, 4)))
    for job in snapshot["jobs"]:
        job["scale_factor"] = int(rng.choice([1, 2, 4]))
    for gpu in snapshot["gpu_types"]:
        gpu["count"] = int(rng.integers(4, 7))  # every gang fits every type: all m jobs run
    cluster = Cluster.of(snapshot)
    iso = gavel_isolated(snapshot)
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    rate = iso  # new jobs: D_j = R_j / iso_j, so r_j = R_j / D_j = iso_j and τ_j = 0
    assert (steps > 0).all()

    def feasible(rho: float) -> bool:
        return cluster.feasible(rate / rho)

    optimum = bisect(feasible, 1e-6, 1e3)
    result = solve(snapshot, policy="finish_time_fairness", options={"isolated_share": "gavel"})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(optimum, rel=1e-6)


def test_gavel_isolated_share_on_gangs_hand_solved() -> None:
    """FTF_GANGS's derivation: ρ* = 7/8, a on the v100 for 6/7 of its time."""
    np.testing.assert_allclose(gavel_isolated(FTF_GANGS), [1.5, 0.75, 0.75, 0.75])
    result = solve(FTF_GANGS, policy="finish_time_fairness", options={"isolated_share": "gavel"})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(7 / 8, rel=1e-7)
    x = assert_feasible_allocation(result, FTF_GANGS)
    assert x[0] @ [2.0, 1.0] == pytest.approx(1.5 / (7 / 8), rel=1e-6)
