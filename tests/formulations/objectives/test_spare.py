"""The spare-capacity stage of makespan and finish-time fairness (FORMULATIONS §2a): the first
stage's optimum is kept, no GPU type stays idle while a job with work left and spare time could
run there, and the total normalized throughput is the largest any allocation keeping the
optimum reaches (an independent LP, scipy's linprog on the snapshot's own arrays)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from apportion.solver import Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.formulations.fairness.lp_oracle import Cluster, random_snapshot

IDLE = 1e-6  # GPUs (and fractions of a job's time) below this are round-off


def time_expanded_makespan(cluster: Cluster, steps: np.ndarray) -> float:
    """min M s.t. Σ_k T_jk Z_jk ≥ R_j, Σ_k Z_jk ≤ M, Σ_j s_j Z_jk ≤ N_k M (Z: seconds on k)."""
    m, k = cluster.t.shape
    columns = m * k + 1  # Z, then M
    work = np.zeros((m, columns))
    time = np.zeros((m, columns))
    for j in range(m):
        work[j, j * k : (j + 1) * k] = -cluster.t[j]
        time[j, j * k : (j + 1) * k] = 1.0
        time[j, -1] = -1.0
    capacity = np.zeros((k, columns))
    for g in range(k):
        capacity[g, g : m * k : k] = cluster.s
        capacity[g, -1] = -cluster.n[g]
    a = np.vstack([work, time, capacity])
    b = np.concatenate([-steps, np.zeros(m + k)])
    cost = np.zeros(columns)
    cost[-1] = 1.0
    bounds = [(0.0, None if v > 0 else 0.0) for v in cluster.t.ravel()] + [(0.0, None)]
    res = linprog(cost, A_ub=a, b_ub=b, bounds=bounds, method="highs")
    assert res.status == 0
    return float(res.fun)


def normalized_value(cluster: Cluster) -> np.ndarray:
    """T_jk / prop_j with prop_j = Σ_k T_jk N_k / C (Gavel's normalizer)."""
    prop = cluster.t @ cluster.n / cluster.n.sum()
    out: np.ndarray = cluster.t / prop[:, None]
    return out


def best_total(cluster: Cluster, demand: np.ndarray) -> float:
    """max Σ_jk (T_jk / prop_j) X_jk over the allocations giving every job eff_j ≥ demand_j."""
    a, b = cluster.rows()
    jobs = np.arange(cluster.t.shape[0])
    a = np.vstack([a, cluster.demand_rows(jobs)])
    b = np.concatenate([b, -demand])
    value = normalized_value(cluster).ravel()
    res = linprog(-value, A_ub=a, b_ub=b, bounds=cluster.bounds(), method="highs")
    assert res.status == 0
    return float(-res.fun)


def usable_idle(cluster: Cluster, x: np.ndarray, wants: np.ndarray) -> list[tuple[int, int]]:
    """(job, type) pairs where the type has idle GPUs, the job can run there, has work left
    (`wants`) and has spare time: capacity a job could use, left unused."""
    idle = cluster.n - cluster.s @ x
    spare = 1.0 - x.sum(axis=1)
    could = (cluster.t > 0) & wants[:, None] & (spare[:, None] > IDLE) & (idle[None, :] > IDLE)
    return [(int(j), int(k)) for j, k in zip(*np.nonzero(could), strict=True)]


def test_a_short_job_takes_the_gpu_the_long_one_leaves() -> None:
    # One type of 2 GPUs: a needs all its time for 10 s (M* = 10); b needs 1 step, 0.1 of its
    # time. Any X_b in [0.1, 1] is optimal; with the stage b runs all the time (finishing at 1 s)
    # and both GPUs are busy.
    snapshot = {
        "gpu_types": [{"name": "g", "count": 2}],
        "jobs": [
            {"id": "a", "throughput": {"g": 1.0}, "steps_remaining": 10},
            {"id": "b", "throughput": {"g": 1.0}, "steps_remaining": 1},
        ],
    }
    result = solve(snapshot, policy="makespan")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(10.0, rel=1e-12)
    assert result.job("a").allocation == pytest.approx({"g": 1.0}, abs=1e-12)
    assert result.job("b").allocation == pytest.approx({"g": 1.0}, abs=1e-12)
    assert result.job("b").metrics["finish_time"] == pytest.approx(1.0, rel=1e-12)
    assert result.gpu_types[0].used == pytest.approx(2.0, abs=1e-12)


def _skewed(seed: int) -> tuple[dict[str, Any], np.ndarray]:
    """A random small cluster with one job ten times longer than the rest, so the first
    stage's vertex has room to leave GPUs idle."""
    rng = np.random.default_rng(seed)
    snapshot = random_snapshot(rng, int(rng.integers(3, 8)), int(rng.integers(1, 4)))
    snapshot["jobs"][0]["steps_remaining"] *= 10
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    return snapshot, steps


@pytest.mark.parametrize("seed", range(16))
def test_makespan_is_kept_and_no_usable_gpu_idles(seed: int) -> None:
    snapshot, steps = _skewed(seed)
    cluster = Cluster.of(snapshot)
    optimum = time_expanded_makespan(cluster, steps)
    first = solve(snapshot, policy="makespan", options={"pareto": False})
    second = solve(snapshot, policy="makespan")
    assert first.status is Status.OPTIMAL and second.status is Status.OPTIMAL
    assert first.objective == pytest.approx(optimum, rel=1e-6)
    assert second.objective == pytest.approx(optimum, rel=1e-6)
    x = assert_feasible_allocation(second, snapshot)
    finish = steps / (cluster.t * x).sum(axis=1)
    assert finish.max() <= optimum * (1 + 1e-6)
    assert usable_idle(cluster, x, steps > 0) == []
    total = float((normalized_value(cluster) * x).sum())
    assert total == pytest.approx(best_total(cluster, steps / optimum), rel=1e-6)


def test_the_first_stage_alone_leaves_usable_gpus_idle() -> None:
    """What the stage is for: on the same family, the first optimum idles GPUs that jobs
    with spare time could use in most cases."""
    idle = 0
    for seed in range(16):
        snapshot, steps = _skewed(seed)
        first = solve(snapshot, policy="makespan", options={"pareto": False})
        x = assert_feasible_allocation(first, snapshot)
        idle += bool(usable_idle(Cluster.of(snapshot), x, steps > 0))
    assert idle >= 12


@pytest.mark.parametrize("seed", range(12))
def test_finish_time_fairness_keeps_its_max_rho_and_no_usable_gpu_idles(seed: int) -> None:
    snapshot, steps = _skewed(seed)
    first = solve(snapshot, policy="finish_time_fairness", options={"pareto": False})
    second = solve(snapshot, policy="finish_time_fairness")
    assert first.status is Status.OPTIMAL and second.status is Status.OPTIMAL
    assert second.objective == pytest.approx(first.objective, rel=1e-6)
    x = assert_feasible_allocation(second, snapshot)
    assert usable_idle(Cluster.of(snapshot), x, steps > 0) == []
    rho = [j.metrics["rho"] for j in second.jobs]
    assert max(rho) <= (first.objective or 0.0) * (1 + 1e-6)


def test_makespan_bench_family_fills_the_cluster() -> None:
    """The issue's shape: hundreds of jobs with spread-out work, where the first optimum used
    a fraction of each type; with the stage every type is full and the makespan unchanged."""
    from apportion.refdata.synthetic import gavel_snapshot

    snapshot = gavel_snapshot(256, seed=0)
    rng = np.random.default_rng(0)
    for job in snapshot["jobs"]:
        job["steps_remaining"] = float(rng.uniform(1e3, 1e6))
    first = solve(snapshot, policy="makespan", options={"pareto": False})
    second = solve(snapshot, policy="makespan")
    assert second.status is Status.OPTIMAL
    assert second.objective == pytest.approx(first.objective, rel=1e-6)
    assert min(g.used / g.available for g in first.gpu_types) < 0.5
    assert all(g.used == pytest.approx(g.available, rel=1e-6) for g in second.gpu_types)
