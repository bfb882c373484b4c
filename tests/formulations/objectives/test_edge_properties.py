"""Property tests: the objective policies on tiny snapshots built to hit the edge cases (no
jobs, identical jobs, jobs that fit nowhere, ties, twin GPU types) against references written
from FORMULATIONS §2–§5 with scipy's linprog (makespan in its time form, finish-time fairness by
bisection over feasibility LPs, min-cost SLOs by brute force over the sets of SLOs met, FIFO
job by job), and every constraint checked on the returned allocation."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from apportion.solver import InputError, SolveResult, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.formulations.fairness.edge_snapshots import runnable, tiny_snapshots
from tests.formulations.fairness.lp_oracle import Cluster, bisect
from tests.formulations.objectives.test_fifo import reference_queue

PROPERTY = settings(
    max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)


def _solved(snapshot: dict[str, Any], policy: str, **options: Any) -> SolveResult:
    result = solve(snapshot, policy=policy, options=options)
    assert result.status is Status.OPTIMAL
    assert [j.id for j in result.jobs] == [j["id"] for j in snapshot["jobs"]]
    for job, fit in zip(result.jobs, runnable(snapshot), strict=True):
        assert fit or (not job.allocation and job.reason), job  # unfit: nothing, and why
    return result


def _kept(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The snapshot without the jobs that can run nowhere (FORMULATIONS §0: left out)."""
    jobs = [j for j, fit in zip(snapshot["jobs"], runnable(snapshot), strict=True) if fit]
    return {**snapshot, "jobs": jobs}


def makespan_by_time(snapshot: dict[str, Any]) -> float:
    """FORMULATIONS §2 in time form: min M with Σ_k T_jk Z_jk ≥ R_j, Σ_k Z_jk ≤ M and
    Σ_j s_j Z_jk ≤ N_k M (variables: Z row-major, then M)."""
    c = Cluster.of(snapshot)
    m, k = c.t.shape
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    rows, rhs = [], []
    for j in range(m):
        work = np.zeros(m * k + 1)
        work[j * k : (j + 1) * k] = -c.t[j]
        span = np.zeros(m * k + 1)
        span[j * k : (j + 1) * k], span[-1] = 1.0, -1.0
        rows += [work, span]
        rhs += [-steps[j], 0.0]
    for g in range(k):
        gpus = np.zeros(m * k + 1)
        gpus[g : m * k : k], gpus[-1] = c.s, -c.n[g]
        rows.append(gpus)
        rhs.append(0.0)
    bounds = [(0, None if v > 0 else 0) for v in c.t.ravel()] + [(0, None)]
    cost = np.zeros(m * k + 1)
    cost[-1] = 1.0
    res = linprog(cost, A_ub=np.array(rows), b_ub=rhs, bounds=bounds)
    assert res.status == 0
    return float(res.fun)


@PROPERTY
@given(tiny_snapshots())
def test_makespan_matches_the_time_form_lp(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "makespan")
    x = assert_feasible_allocation(result, snapshot)
    kept = _kept(snapshot)
    if not kept["jobs"]:
        assert result.objective == 0.0
        return
    best = makespan_by_time(kept)
    assert result.objective == pytest.approx(best, rel=1e-6)
    eff = (Cluster.of(snapshot).t * x).sum(axis=1)
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    fits = np.array(runnable(snapshot))
    assert (eff[fits] * best >= steps[fits] * (1 - 1e-6)).all()  # every job done by M


@st.composite
def with_history(draw: st.DrawFn) -> dict[str, Any]:
    """`tiny_snapshots` where some jobs have run already (t_j, t^iso_done_j > 0)."""
    snapshot = draw(tiny_snapshots())
    for job in snapshot["jobs"]:
        if draw(st.booleans()):
            job["time_since_start"] = draw(st.sampled_from([5.0, 30.0]))
            job["isolated_time_done"] = draw(st.sampled_from([0.0, 4.0]))
    return snapshot


def rho_by_bisection(snapshot: dict[str, Any]) -> float:
    """FORMULATIONS §3 (isolated share `usable`, m the jobs that can run): ρ_j = τ_j +
    r_j / eff_j with D_j = t^iso_done_j + R_j / iso_j, τ_j = t_j / D_j, r_j = R_j / D_j; the
    least ρ for which eff_j ≥ r_j / (ρ − τ_j) is feasible for every job."""
    c = Cluster.of(snapshot)
    jobs = snapshot["jobs"]
    share = np.where(c.t > 0, (c.n / len(jobs))[None, :] / c.s[:, None], 0.0)
    share /= np.maximum(share.sum(axis=1, keepdims=True), 1.0)
    iso = (c.t * share).sum(axis=1)
    steps = np.array([j["steps_remaining"] for j in jobs])
    since = np.array([j.get("time_since_start", 0.0) for j in jobs])
    d = np.array([j.get("isolated_time_done", 0.0) for j in jobs]) + steps / iso
    tau, rate = since / d, steps / d
    top = float((tau + rate / c.t.max(axis=1)).max())
    return bisect(
        lambda rho: rho > tau.max() and c.feasible(rate / (rho - tau)), tau.max(), 1e3 * top
    )


@settings(PROPERTY, max_examples=30)
@given(with_history())
def test_finish_time_fairness_matches_bisection(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "finish_time_fairness")
    assert_feasible_allocation(result, snapshot)
    kept = _kept(snapshot)
    if not kept["jobs"]:
        assert result.objective is None
        return
    assert result.objective == pytest.approx(rho_by_bisection(kept), rel=1e-6)


@PROPERTY
@given(tiny_snapshots())
def test_throughput_and_per_dollar_match_the_textbook_lp(snapshot: dict[str, Any]) -> None:
    total = _solved(snapshot, "max_total_throughput")
    assert_feasible_allocation(total, snapshot)
    per_dollar = _solved(snapshot, "throughput_per_dollar")
    assert_feasible_allocation(per_dollar, snapshot)
    if not snapshot["jobs"]:
        assert total.objective == per_dollar.objective == 0.0
        return
    c = Cluster.of(snapshot)
    assert total.objective == pytest.approx(c.max_linear(c.t), rel=1e-9, abs=1e-12)
    best = c.max_linear(c.t / c.price[None, :])
    assert per_dollar.objective == pytest.approx(best, rel=1e-9, abs=1e-12)


@PROPERTY
@given(tiny_snapshots())
def test_normalized_and_gang_priced_variants_match_the_textbook_lp(
    snapshot: dict[str, Any],
) -> None:
    """Σ_j eff_j / prop_j (prop_j over the snapshot's throughputs, FORMULATIONS §0), and
    throughput per dollar with a gang's price s_j p_k."""
    normalized = _solved(snapshot, "max_total_throughput", normalized=True)
    assert_feasible_allocation(normalized, snapshot)
    gang = _solved(snapshot, "throughput_per_dollar", gang_price=True)
    assert_feasible_allocation(gang, snapshot)
    if not snapshot["jobs"]:
        assert normalized.objective == gang.objective == 0.0
        return
    c = Cluster.of(snapshot)
    names = [g["name"] for g in snapshot["gpu_types"]]
    raw = np.array([[j["throughput"].get(k, 0.0) for k in names] for j in snapshot["jobs"]])
    prop = raw @ c.n / c.n.sum()
    per_prop = np.divide(c.t, prop[:, None], out=np.zeros_like(c.t), where=prop[:, None] > 0)
    assert normalized.objective == pytest.approx(c.max_linear(per_prop), rel=1e-9, abs=1e-12)
    priced = c.t / (c.s[:, None] * c.price[None, :])
    assert gang.objective == pytest.approx(c.max_linear(priced), rel=1e-9, abs=1e-12)


@st.composite
def with_deadlines(draw: st.DrawFn) -> dict[str, Any]:
    """`tiny_snapshots` where some jobs have a deadline: tight (at or below what its fastest
    type alone gives), loose, or on a job that can run nowhere."""
    snapshot = {**draw(tiny_snapshots()), "now": 0.0}
    for job in snapshot["jobs"]:
        if draw(st.integers(0, 3)):
            fastest = max([v for v in job["throughput"].values() if v > 0], default=1.0)
            slack = draw(st.sampled_from([0.9, 1.0, 1.5, 3.0]))
            job["deadline"] = job["steps_remaining"] / fastest * slack
    return snapshot


def cheapest_most_slos(snapshot: dict[str, Any], value: np.ndarray) -> tuple[float, float]:
    """FORMULATIONS §4 by brute force: the largest value of SLOs any feasible set meets, then
    the least cost Σ_k p_k Σ_j s_j X_jk of such a set (one LP per set)."""
    jobs = snapshot["jobs"]
    if not jobs:
        return 0.0, 0.0
    c = Cluster.of(snapshot)
    due = [j for j, job in enumerate(jobs) if "deadline" in job]
    need = np.array([job["steps_remaining"] / job.get("deadline", 1.0) for job in jobs])
    best = (0.0, 0.0)
    for size in range(1, len(due) + 1):
        for chosen in itertools.combinations(due, size):
            picked = np.array(chosen)
            cost = c.min_cost(picked, need[picked])
            total = float(value[picked].sum())
            if cost is None or total < best[0] - 1e-9:
                continue
            if total > best[0] + 1e-9 or cost < best[1]:
                best = (total, cost)
    return best


@PROPERTY
@given(with_deadlines(), st.booleans())
def test_min_cost_slo_matches_brute_force(snapshot: dict[str, Any], by_weight: bool) -> None:
    """The most SLOs met (by count, or by the jobs' weights), then the least cost."""
    jobs = snapshot["jobs"]
    if jobs and not any("deadline" in job for job in jobs):
        with pytest.raises(InputError):
            solve(snapshot, policy="min_cost_slo")
        return
    result = _solved(snapshot, "min_cost_slo", maximize="weight" if by_weight else "count")
    x = assert_feasible_allocation(result, snapshot)
    met = np.array([bool(j.metrics.get("slo_met")) for j in result.jobs], dtype=bool)
    value = np.array([job["weight"] if by_weight else 1.0 for job in jobs])
    best, cost = cheapest_most_slos(snapshot, value)
    assert float(value[met].sum()) == pytest.approx(best)
    assert result.objective == pytest.approx(cost, rel=1e-6, abs=1e-9)
    if not jobs:
        return
    eff = (Cluster.of(snapshot).t * x).sum(axis=1)
    for j, job in enumerate(jobs):
        if met[j]:  # a met SLO is met by the allocation returned
            assert eff[j] * job["deadline"] >= job["steps_remaining"] * (1 - 1e-6)
        if "deadline" not in job:
            assert not result.jobs[j].allocation


@PROPERTY
@given(tiny_snapshots(max_jobs=6), st.sampled_from(["strict", "backfill", "gavel"]))
def test_fifo_matches_the_rule_job_by_job(snapshot: dict[str, Any], mode: str) -> None:
    result = _solved(snapshot, "fifo", mode=mode)
    assert_feasible_allocation(result, snapshot)
    placed, blocker = reference_queue(snapshot, mode)
    assert {j.id: next(iter(j.allocation)) for j in result.jobs if j.allocation} == placed
    assert all(list(j.allocation.values()) == [1.0] for j in result.jobs if j.allocation)
    assert result.summary["blocked_by"] == blocker
    assert result.objective == len(placed)
