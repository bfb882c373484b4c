"""Property tests: the share policies on tiny snapshots built to hit the edge cases (no jobs,
identical jobs, jobs that fit nowhere, ties, twin GPU types, space-sharing pairs) against
independent LPs written from FORMULATIONS §1 with scipy's linprog, and every constraint checked
on the returned allocation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from apportion.solver import SolveResult, Status, solve
from tests.allocation_checks import allocation_matrix, assert_feasible_allocation
from tests.fairness_reference import Instance, check_result, reference_water_filling
from tests.formulations.fairness.edge_snapshots import SPEEDS, runnable, tiny_snapshots
from tests.formulations.fairness.max_min_oracle import linprog_max_min

PROPERTY = settings(
    max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)


def _solved(snapshot: dict[str, Any], policy: str, **options: Any) -> SolveResult:
    result = solve(snapshot, policy=policy, options=options)
    assert result.status is Status.OPTIMAL
    assert [j.id for j in result.jobs] == [j["id"] for j in snapshot["jobs"]]
    fits = runnable(snapshot)
    for job, fit in zip(result.jobs, fits, strict=True):
        assert fit or (not job.allocation and job.reason), job  # unfit: nothing, and why
    return result


@PROPERTY
@given(tiny_snapshots(), st.booleans())
def test_max_min_matches_the_textbook_lp(snapshot: dict[str, Any], aware: bool) -> None:
    result = _solved(snapshot, "max_min_fairness", heterogeneity_aware=aware)
    assert_feasible_allocation(result, snapshot)
    if not any(runnable(snapshot)):
        assert result.objective is None
        return
    assert result.objective == pytest.approx(linprog_max_min(snapshot, aware), rel=1e-6)


@PROPERTY
@given(tiny_snapshots())
def test_water_filling_matches_the_slow_reference(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "water_filling")
    assert_feasible_allocation(result, snapshot)
    if not snapshot["jobs"]:
        return
    inst = Instance(snapshot)
    v = check_result(result, inst)
    expected = reference_water_filling(inst, lambda active: inst.w)
    np.testing.assert_allclose(v, expected, rtol=1e-6, atol=1e-7 * max(1.0, expected.max()))


@st.composite
def with_entities(draw: st.DrawFn) -> dict[str, Any]:
    """`tiny_snapshots` whose jobs belong to 1–3 entities, each weighted and fair or FIFO."""
    snapshot = draw(tiny_snapshots())
    entities = [
        {
            "id": f"e{e}",
            "weight": draw(st.sampled_from([1.0, 2.0, 3.0])),
            "policy": draw(st.sampled_from(["fairness", "fifo"])),
        }
        for e in range(draw(st.integers(1, 3)))
    ]
    jobs = [
        {**job, "entity": draw(st.sampled_from([e["id"] for e in entities]))}
        for job in snapshot["jobs"]
    ]
    return {**snapshot, "jobs": jobs, "entities": entities}


def entity_weights(snapshot: dict[str, Any], own: np.ndarray) -> Any:
    """FORMULATIONS §1b: among the still-active jobs, a fair entity splits its weight W_e in
    proportion to w_j, a FIFO entity gives all of it to its oldest job (then the first listed)."""
    entities = {e["id"]: e for e in snapshot["entities"]}
    jobs = snapshot["jobs"]

    def rule(active: np.ndarray) -> np.ndarray:
        out = np.zeros(active.size)
        for name, entity in entities.items():
            members = [j for j, job in enumerate(jobs) if active[j] and job["entity"] == name]
            if not members:
                continue
            if entity["policy"] == "fifo":
                oldest = min(members, key=lambda j: (jobs[j]["arrival_time"], j))
                out[oldest] = entity["weight"]
            else:
                total = sum(own[j] for j in members)
                for j in members:
                    out[j] = entity["weight"] * own[j] / total
        return out

    return rule


@PROPERTY
@given(with_entities())
def test_hierarchical_matches_the_slow_reference(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "hierarchical")
    assert_feasible_allocation(result, snapshot)
    if not snapshot["jobs"]:
        return
    inst = Instance(snapshot)
    v = check_result(result, inst)
    expected = reference_water_filling(inst, entity_weights(snapshot, inst.w))
    np.testing.assert_allclose(v, expected, rtol=1e-6, atol=1e-7 * max(1.0, expected.max()))


@st.composite
def with_pairs(draw: st.DrawFn) -> dict[str, Any]:
    """`tiny_snapshots` with space-sharing pairs offered among jobs of equal scale factor
    (identical jobs, jobs that fit nowhere and zero throughputs together included)."""
    snapshot = draw(tiny_snapshots(max_jobs=4))
    jobs, names = snapshot["jobs"], [g["name"] for g in snapshot["gpu_types"]]
    candidates = [
        (a["id"], b["id"])
        for i, a in enumerate(jobs)
        for b in jobs[i + 1 :]
        if a.get("scale_factor", 1) == b.get("scale_factor", 1)
    ]
    chosen = draw(st.lists(st.sampled_from(candidates), unique=True)) if candidates else []
    pairs = [
        {"a": a, "b": b, "throughput": {n: [draw(SPEEDS), draw(SPEEDS)] for n in names}}
        for a, b in chosen
    ]
    return {**snapshot, "job_pairs": pairs}


def max_min_with_pairs(inst: Instance) -> float:
    """FORMULATIONS §1c: max t with v_j ≥ w_j t for every job that runs somewhere alone, over
    the columns of jobs alone and of pairs (variables: the columns, then t)."""
    active = np.flatnonzero(inst.active)
    n = len(inst.columns)
    rows = [np.hstack([inst.time, np.zeros((inst.time.shape[0], 1))])]
    rows.append(np.hstack([inst.capacity, np.zeros((inst.capacity.shape[0], 1))]))
    rows += [np.hstack([-inst.value[j], [inst.w[j]]])[None, :] for j in active]
    rhs = np.concatenate([np.ones(inst.time.shape[0]), inst.count, np.zeros(active.size)])
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=np.vstack(rows), b_ub=rhs, bounds=[*inst.bounds, (0, None)])
    assert res.status == 0
    return float(-res.fun)


@PROPERTY
@given(with_pairs())
def test_max_min_with_pairs_matches_the_textbook_lp(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "max_min_fairness", space_sharing=True)
    if not snapshot["jobs"]:
        return
    inst = Instance(snapshot, space_sharing=True)
    check_result(result, inst)
    if not inst.active.any():
        assert result.objective is None
        return
    assert result.objective == pytest.approx(max_min_with_pairs(inst), rel=1e-6)


@PROPERTY
@given(with_pairs())
def test_water_filling_with_pairs_matches_the_slow_reference(snapshot: dict[str, Any]) -> None:
    result = _solved(snapshot, "water_filling", space_sharing=True)
    if not snapshot["jobs"]:
        return
    inst = Instance(snapshot, space_sharing=True)
    v = check_result(result, inst)
    expected = reference_water_filling(inst, lambda active: inst.w)
    np.testing.assert_allclose(v, expected, rtol=1e-6, atol=1e-7 * max(1.0, expected.max()))


def gavel_agnostic_max_min(snapshot: dict[str, Any]) -> float:
    """FORMULATIONS §1, agnostic as Gavel's baseline: T_jk := 1 on every type the gang fits
    (prop_j = 1), so u_j = s_j Σ_k X_jk / w_j, over the jobs that run somewhere; max min u_j."""
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = [j for j, fit in zip(snapshot["jobs"], runnable(snapshot), strict=True) if fit]
    m, k = len(jobs), counts.size
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    w = np.array([j.get("weight", 1.0) for j in jobs])
    rows, rhs = [], []
    for j in range(m):
        share = np.zeros(m * k + 1)
        share[j * k : (j + 1) * k], share[-1] = -s[j] / w[j], 1.0
        time = np.zeros(m * k + 1)
        time[j * k : (j + 1) * k] = 1.0
        rows += [share, time]
        rhs += [0.0, 1.0]
    for g in range(k):
        gpus = np.zeros(m * k + 1)
        gpus[g : m * k : k] = s
        rows.append(gpus)
        rhs.append(counts[g])
    bounds = [(0, 1 if s[j] <= counts[g] else 0) for j in range(m) for g in range(k)]
    cost = np.zeros(m * k + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=np.array(rows), b_ub=rhs, bounds=[*bounds, (0, None)])
    assert res.status == 0
    return float(-res.fun)


@PROPERTY
@given(tiny_snapshots())
def test_gavel_agnostic_max_min_matches_the_textbook_lp(snapshot: dict[str, Any]) -> None:
    options = {"heterogeneity_aware": False, "agnostic_definition": "gavel"}
    result = _solved(snapshot, "max_min_fairness", **options)
    # Time may sit where the job makes no progress (the definition's point), not elsewhere.
    x = allocation_matrix(result, snapshot)
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    scale = np.array([j.get("scale_factor", 1) for j in snapshot["jobs"]], dtype=float)
    assert (x >= 0).all() and (x.sum(axis=1) <= 1 + 1e-7).all()
    assert (scale @ x <= counts + 1e-7).all()
    assert not x[scale[:, None] > counts[None, :]].any()  # no gang where it cannot fit
    if not any(runnable(snapshot)):
        assert result.objective is None
        return
    assert result.objective == pytest.approx(gavel_agnostic_max_min(snapshot), rel=1e-6)
