"""Makespan under throughput bounds: the optimum against an independent linprog over the worst
case, every job done by its stated finish time in 1,000 draws from the box, δ = 0 unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from apportion.refdata.synthetic import random_snapshot
from apportion.solver import InputError, Status, solve
from tests.allocation_checks import allocation_matrix, assert_feasible_allocation
from tests.uncertainty_checks import dense, running_snapshots


def _with_steps(snapshot: dict[str, Any], seed: int, spread: float) -> dict[str, Any]:
    """Steps remaining for every job; every other job bounds each of its throughputs."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i, job in enumerate(snapshot["jobs"]):
        job = {**job, "steps_remaining": float(rng.uniform(100, 1_000))}
        if i % 2 and job.get("throughput"):
            own = {k: float(rng.uniform(0, spread)) for k in job["throughput"]}
            job["throughput_uncertainty"] = own
        jobs.append(job)
    return {**snapshot, "jobs": jobs}


def linprog_makespan(snapshot: dict[str, Any], default: float) -> float:
    """min M: maximize u s.t. Σ_k T_jk (1 − δ_jk) x_jk ≥ R_j u, time and capacity rows, over
    the jobs with steps left that can progress somewhere even at worst (0 when there are none:
    nothing is left to do that can be done)."""
    n, t, delta, s, _, r = dense(snapshot, default)
    low = t * (1 - delta)
    usable = (low > 0) & (s[:, None] <= n[None, :])
    keep = usable.any(axis=1) & (r > 0)
    if not keep.any():
        return 0.0
    low, s, r, usable = low[keep], s[keep], r[keep], usable[keep]
    m, k = low.shape
    a_ub, b_ub = [], []
    for j in range(m):
        row = np.zeros(m * k + 1)
        row[j * k : (j + 1) * k] = -low[j]
        row[-1] = r[j]
        a_ub += [row]
        b_ub += [0.0]
        row = np.zeros(m * k + 1)
        row[j * k : (j + 1) * k] = 1.0
        a_ub += [row]
        b_ub += [1.0]
    for g in range(k):
        row = np.zeros(m * k + 1)
        row[g : m * k : k] = s
        a_ub += [row]
        b_ub += [n[g]]
    bounds = [(0, 1 if usable[j, g] else 0) for j in range(m) for g in range(k)] + [(0, None)]
    c = np.zeros(m * k + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0
    return float(1.0 / -res.fun)


@settings(max_examples=20, derandomize=True, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    jobs=st.integers(1, 5),
    types=st.integers(1, 3),
    default=st.sampled_from([0.0, 0.2, 0.5]),
)
def test_optimum_matches_an_independent_lp(
    seed: int, jobs: int, types: int, default: float
) -> None:
    snapshot = _with_steps(random_snapshot(jobs, types, seed=seed), seed, 0.6)
    result = solve(snapshot, "makespan", uncertainty=default)
    assert result.status is Status.OPTIMAL
    assert_feasible_allocation(result, snapshot)
    assert result.objective == pytest.approx(linprog_makespan(snapshot, default), rel=1e-6)


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(snapshot=running_snapshots(), default=st.sampled_from([0.0, 0.2, 0.5]))
def test_running_jobs_and_empty_queues_match_the_independent_lp(
    snapshot: dict[str, Any], default: float
) -> None:
    """Jobs already running (a time-fraction answer may move them: their placement fixes only
    their gang), nothing waiting, no jobs at all, jobs with no steps left or no throughput, and
    bounds of 1 (no progress guaranteed): the optimum is the worst case's, and the answer says
    what it guarantees whenever a bound is in force."""
    result = solve(snapshot, "makespan", uncertainty=default)
    assert result.status is Status.OPTIMAL
    x = assert_feasible_allocation(result, snapshot)
    assert result.objective == pytest.approx(linprog_makespan(snapshot, default), rel=1e-6)
    # A job's empty bound (it runs nowhere) states nothing: no bound is then in force.
    bounded = default > 0 or any(j.get("throughput_uncertainty") for j in snapshot["jobs"])
    assert ("guarantee" in result.summary) == bounded
    _, t, delta, _, _, r = dense(snapshot, default)
    worst = (t * (1 - delta) * x).sum(axis=1)
    assert result.objective is not None
    for job, steps, speed in zip(result.jobs, r, worst, strict=True):
        if steps > 0 and speed > 0:  # done by its stated time at the worst throughputs
            stated = float(job.metrics["finish_time"])  # type: ignore[arg-type]
            assert steps / speed <= stated * (1 + 1e-6)
            assert stated <= result.objective * (1 + 1e-6)
        elif steps > 0:
            assert job.reason, job  # it can never finish at worst: said so


def test_every_job_finishes_by_its_stated_time_in_the_box() -> None:
    snapshot = _with_steps(random_snapshot(30, 3, seed=11), 11, 0.3)
    result = solve(snapshot, "makespan", uncertainty=0.3)
    assert result.status is Status.OPTIMAL and result.objective is not None
    assert "guarantee" in result.summary
    x = allocation_matrix(result, snapshot)
    _, t, delta, _, _, r = dense(snapshot, 0.3)
    rng = np.random.default_rng(7)
    sample = t * (1 + rng.uniform(-1, 1, size=(1_000, *t.shape)) * delta)
    finish = r / (sample * x).sum(axis=-1)
    stated = np.array([j.metrics["finish_time"] for j in result.jobs], dtype=float)
    assert (finish <= stated * (1 + 1e-9)).all()
    assert (stated <= result.objective * (1 + 1e-9)).all()
    nominal = solve(snapshot, "makespan")
    assert nominal.objective is not None and nominal.objective < result.objective


def test_no_uncertainty_leaves_the_answer_unchanged() -> None:
    plain = _with_steps(random_snapshot(12, 3, seed=3), 3, 0.0)
    for job in plain["jobs"]:
        job.pop("throughput_uncertainty", None)
    assert solve(plain, "makespan", uncertainty=0.0).objective == solve(plain, "makespan").objective


def test_bounds_need_measured_throughputs() -> None:
    snapshot = _with_steps(random_snapshot(3, 2, seed=1), 1, 0.0)
    with pytest.raises(InputError) as caught:
        solve(snapshot, "makespan", uncertainty=0.2, heterogeneity_aware=False)
    assert caught.value.errors[0].loc == ("options", "uncertainty")
