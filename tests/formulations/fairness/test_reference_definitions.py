"""Gavel's heterogeneity-agnostic baseline as an option (FORMULATIONS §1): the hand-solved case,
an independent dense LP on random snapshots, and the rules it shares with the default (wide
gangs stay off small types, jobs that run nowhere stay out)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy.optimize import linprog

from apportion.refdata.synthetic import random_snapshot
from apportion.solver import Status, solve
from tests.allocation_checks import allocation_matrix
from tests.conformance.cases_max_min import AGNOSTIC

GAVEL = {"heterogeneity_aware": False, "agnostic_definition": "gavel"}


def gavel_agnostic_max_min(snapshot: dict[str, Any]) -> float:
    """Gavel's `MaxMinFairnessPolicy` written out: T := 1 on every type, so prop = 1 and
    u_j = s_j Σ_k X_jk / w_j, with X_jk allowed wherever the gang fits (s_j ≤ N_k) and jobs
    that run nowhere left out."""
    names = [g["name"] for g in snapshot["gpu_types"]]
    n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = [
        j
        for j in snapshot["jobs"]
        if any(
            v > 0 and j.get("scale_factor", 1) <= n[names.index(k)]
            for k, v in j["throughput"].items()
        )
    ]
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    w = np.array([j.get("weight", 1.0) for j in jobs])
    m, k = s.size, n.size
    rows, rhs = [], []
    for j in range(m):
        share = np.zeros(m * k + 1)
        share[j * k : (j + 1) * k] = -s[j] / w[j]
        share[-1] = 1.0
        time = np.zeros(m * k + 1)
        time[j * k : (j + 1) * k] = 1.0
        rows += [share, time]
        rhs += [0.0, 1.0]
    for g in range(k):
        cap = np.zeros(m * k + 1)
        cap[g : m * k : k] = s
        rows.append(cap)
        rhs.append(n[g])
    bounds = [(0, 1 if s[j] <= n[g] else 0) for j in range(m) for g in range(k)] + [(0, None)]
    cost = np.zeros(m * k + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=np.array(rows), b_ub=rhs, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun)


@pytest.mark.parametrize("policy", ["max_min_fairness", "water_filling"])
@pytest.mark.parametrize("merge", [True, False])
def test_hand_solved_gavel_baseline(policy: str, merge: bool) -> None:
    """AGNOSTIC's derivation: 2/3 for everyone, k80 time credited to jobs that cannot use it."""
    result = solve(AGNOSTIC, policy=policy, options={**GAVEL, "merge_identical": merge})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2 / 3, rel=1e-7)
    assert [j.normalized_share for j in result.jobs] == pytest.approx([2 / 3] * 3, rel=1e-7)
    credited = sum(result.job(j).allocation.get("k80", 0.0) for j in "bc")
    assert credited >= 1 / 3 - 1e-7  # a holds at most 2/3 of the k80
    assert result.job("a").effective_throughput == pytest.approx(2 / 3, rel=1e-6)
    for j in "bc":  # progress is measured: only the v100 time counts
        job = result.job(j)
        assert job.effective_throughput == pytest.approx(job.allocation.get("v100", 0.0))
    usable = solve(AGNOSTIC, policy=policy, options={"heterogeneity_aware": False})
    assert usable.objective == pytest.approx(1.0)
    assert usable.job("b").allocation == pytest.approx({"v100": 0.5})


@pytest.mark.parametrize("seed", range(25))
def test_random_snapshots_match_the_reference_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    snapshot = random_snapshot(int(rng.integers(1, 12)), int(rng.integers(1, 4)), seed=seed)
    for g in snapshot["gpu_types"]:
        g["count"] = int(rng.integers(1, 9))
    result = solve(snapshot, options=GAVEL)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(gavel_agnostic_max_min(snapshot), rel=1e-6)
    x = allocation_matrix(result, snapshot)
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    scale = np.array([j["scale_factor"] for j in snapshot["jobs"]], dtype=float)
    assert (scale @ x <= counts + 1e-7).all()
    assert (x[scale[:, None] > counts[None, :]] <= 1e-9).all(), "a gang on a type it cannot fit"


def test_gangs_too_wide_and_jobs_that_run_nowhere_are_treated_as_by_default() -> None:
    snapshot = {
        "gpu_types": [{"name": "small", "count": 1}, {"name": "big", "count": 4}],
        "jobs": [
            {"id": "wide", "scale_factor": 2, "throughput": {"small": 1.0, "big": 1.0}},
            {"id": "nowhere", "throughput": {}},
            {"id": "one", "throughput": {"big": 1.0}},
        ],
    }
    result = solve(snapshot, options=GAVEL)
    assert result.job("wide").allocation.get("small", 0.0) == 0.0
    assert result.job("nowhere").allocation == {} and result.job("nowhere").reason
    assert "small" in result.job("one").allocation  # credited where it makes no progress
