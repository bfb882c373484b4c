"""Robust max-min fairness: the LP's optimum against an independent linprog written from the
math, δ = 0 against max-min fairness, the guarantee checked on 1,000 draws from the box, and bad
input refused."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from apportion.refdata.synthetic import gavel_snapshot, random_snapshot
from apportion.solver import InputError, Status, solve
from tests.allocation_checks import allocation_matrix, assert_feasible_allocation
from tests.uncertainty_checks import dense, running_snapshots

DRAWS = 1_000


def linprog_robust(snapshot: dict[str, Any], default: float, reference: str) -> float | None:
    """max t s.t. s_j Σ_k T'_jk x_jk ≥ w_j t prop_j(T^ref) for every vertex T' of job j's box
    (a ratio of linear functions over a box is smallest at a vertex; T^ref = T' with `box`, T
    with `stated`), Σ_k x_jk ≤ 1, Σ_j s_j x_jk ≤ N_k: written densely for scipy's linprog.
    None when no job can run anywhere (there is no level to state)."""
    n, t, delta, s, w, _ = dense(snapshot, default)
    usable = (t > 0) & (s[:, None] <= n[None, :])
    keep = usable.any(axis=1)
    if not keep.any():
        return None
    t, delta, s, w, usable = t[keep], delta[keep], s[keep], w[keep], usable[keep]
    m, k = t.shape
    a_ub, b_ub = [], []
    for j in range(m):
        ends = zip(t[j] * (1 - delta[j]), t[j] * (1 + delta[j]), strict=True)
        for vertex in map(np.array, itertools.product(*ends)):
            ref = vertex if reference == "box" else t[j]
            row = np.zeros(m * k + 1)
            row[j * k : (j + 1) * k] = -s[j] * (
                vertex if reference == "box" else t[j] * (1 - delta[j])
            )
            row[-1] = w[j] * (ref @ n / n.sum())
            a_ub.append(row)
            b_ub.append(0.0)
        row = np.zeros(m * k + 1)
        row[j * k : (j + 1) * k] = 1.0
        a_ub.append(row)
        b_ub.append(1.0)
    for g in range(k):
        row = np.zeros(m * k + 1)
        row[g : m * k : k] = s
        a_ub.append(row)
        b_ub.append(n[g])
    bounds = [(0, 1 if usable[j, g] else 0) for j in range(m) for g in range(k)] + [(0, None)]
    c = np.zeros(m * k + 1)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun)


def with_uncertainty(snapshot: dict[str, Any], seed: int, spread: float) -> dict[str, Any]:
    """Each job bounds its throughput on its first usable type tightly (profiled there) and
    takes the default elsewhere; every third job gives a bound up to `spread` on each type."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i, job in enumerate(snapshot["jobs"]):
        types = sorted(job.get("throughput", {}))
        if not types:
            jobs.append(job)
            continue
        own = {types[0]: 0.02}
        if i % 3 == 0:
            own = {k: float(rng.uniform(0, spread)) for k in types}
        jobs.append({**job, "throughput_uncertainty": own})
    return {**snapshot, "jobs": jobs}


@settings(max_examples=25, derandomize=True, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    jobs=st.integers(2, 5),
    types=st.integers(1, 3),
    default=st.sampled_from([0.0, 0.1, 0.3, 0.6]),
    reference=st.sampled_from(["box", "stated"]),
)
def test_optimum_matches_an_independent_lp(
    seed: int, jobs: int, types: int, default: float, reference: str
) -> None:
    snapshot = with_uncertainty(random_snapshot(jobs, types, seed=seed), seed, 0.5)
    result = solve(snapshot, "robust_max_min", uncertainty=default, reference=reference)
    assert result.status is Status.OPTIMAL
    assert_feasible_allocation(result, snapshot)
    expected = linprog_robust(snapshot, default, reference)
    assert result.objective == pytest.approx(expected, rel=1e-6, abs=1e-9)


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    snapshot=running_snapshots(),
    default=st.sampled_from([0.0, 0.3, 0.6]),
    reference=st.sampled_from(["box", "stated"]),
)
def test_running_jobs_and_empty_queues_match_the_independent_lp(
    snapshot: dict[str, Any], default: float, reference: str
) -> None:
    """Jobs already running (time fractions may move them: a placement fixes only the gang),
    nothing waiting, no jobs at all, jobs that can run nowhere, bounds of 1: the level is the
    independent LP's (none when no job can run), every placed job's stated guarantee reaches
    it, and the answer says what it guarantees."""
    result = solve(snapshot, "robust_max_min", uncertainty=default, reference=reference)
    assert result.status is Status.OPTIMAL
    assert [j.id for j in result.jobs] == [j["id"] for j in snapshot["jobs"]]
    x = assert_feasible_allocation(result, snapshot)
    expected = linprog_robust(snapshot, default, reference)
    assert "guarantee" in result.summary
    if expected is None:
        assert result.objective is None and not x.any()
        return
    assert result.objective is not None
    assert result.objective == pytest.approx(expected, rel=1e-6, abs=1e-9)
    guaranteed = np.array([j.metrics["guaranteed_share"] for j in result.jobs], dtype=float)
    placed = x.sum(axis=1) > 0
    assert (guaranteed[placed] >= result.objective - 1e-7).all()
    n, t, _, s, _, _ = dense(snapshot, default)
    fits = np.asarray(((t > 0) & (s[:, None] <= n[None, :])).any(axis=1)).tolist()
    for job, fit in zip(result.jobs, fits, strict=True):
        assert fit or job.reason, job  # a job that fits nowhere is told why


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_uncertainty_is_max_min_fairness(seed: int) -> None:
    snapshot = gavel_snapshot(16, seed=seed)
    nominal = solve(snapshot, "max_min_fairness")
    expected = np.array([j.normalized_share or 0.0 for j in nominal.jobs])
    # The stated reference runs max-min's own LPs: the very same answer.
    stated = solve(snapshot, "robust_max_min", reference="stated")
    assert stated.objective == pytest.approx(nominal.objective, rel=1e-9)
    np.testing.assert_allclose(
        allocation_matrix(stated, snapshot), allocation_matrix(nominal, snapshot), atol=1e-9
    )
    shares = np.array([j.metrics["guaranteed_share"] for j in stated.jobs], dtype=float)
    np.testing.assert_allclose(shares, expected)
    # The box LP is another model of the same problem: the same level and Pareto total.
    box = solve(snapshot, "robust_max_min")
    assert box.objective == pytest.approx(nominal.objective, rel=1e-7)
    total = sum(j.normalized_share or 0.0 for j in box.jobs)
    assert total == pytest.approx(expected.sum(), rel=1e-7)


def _realized(
    snapshot: dict[str, Any], x: np.ndarray, default: float, draws: int, stated: bool
) -> np.ndarray:
    """(draws, jobs) realized shares s_j Σ_k T'_jk x_jk / (w_j prop_j), T' uniform in the box;
    prop_j at T' itself, or at the stated T."""
    n, t, delta, s, w, _ = dense(snapshot, default)
    rng = np.random.default_rng(2026)
    sample = t * (1 + rng.uniform(-1, 1, size=(draws, *t.shape)) * delta)
    prop = (t if stated else sample) @ n / n.sum()
    eff = (sample * x).sum(axis=-1)
    shares: np.ndarray = np.divide(s * eff, w * prop, out=np.zeros_like(eff), where=prop > 0)
    return shares


@pytest.mark.parametrize("reference", ["box", "stated"])
def test_no_share_falls_below_its_guarantee_in_the_box(reference: str) -> None:
    snapshot = with_uncertainty(gavel_snapshot(24, seed=5), 5, 0.3)
    result = solve(snapshot, "robust_max_min", uncertainty=0.3, reference=reference)
    assert result.status is Status.OPTIMAL and result.objective is not None
    x = assert_feasible_allocation(result, snapshot)
    guaranteed = np.array([j.metrics["guaranteed_share"] for j in result.jobs])
    placed = x.sum(axis=1) > 0
    assert (guaranteed[placed] >= result.objective - 1e-9).all()
    realized = _realized(snapshot, x, 0.3, DRAWS, stated=reference == "stated")
    assert (realized >= guaranteed - 1e-9).all()
    # The worst draw comes close to the guarantee: it is a bound, not a loose floor.
    assert realized.min(axis=0)[placed] == pytest.approx(guaranteed[placed], rel=0.15)


def test_the_nominal_answer_breaks_its_shares_in_the_box() -> None:
    """Why the robust policy exists: max-min's own level is not held once throughputs move."""
    snapshot = with_uncertainty(gavel_snapshot(24, seed=5), 5, 0.3)
    nominal = solve(snapshot, "max_min_fairness")
    assert nominal.objective is not None
    x = allocation_matrix(nominal, snapshot)
    realized = _realized(snapshot, x, 0.3, DRAWS, stated=False)
    placed = x.sum(axis=1) > 0
    assert realized[:, placed].min() < nominal.objective * 0.95


BASE: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 2}, {"name": "k80", "count": 2}],
    "jobs": [
        {"id": "a", "throughput": {"v100": 2.0, "k80": 1.0}},
        {"id": "b", "throughput": {"v100": 1.0, "k80": 1.0}},
    ],
}


def _with_first_job(**fields: Any) -> dict[str, Any]:
    first, second = BASE["jobs"]
    return {**BASE, "jobs": [{**first, **fields}, second]}


@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        ({"throughput_uncertainty": {"v100": 1.5}}, ("throughput_uncertainty", "v100")),
        ({"throughput_uncertainty": {"v100": -0.1}}, ("throughput_uncertainty", "v100")),
        ({"throughput_uncertainty": {"a100": 0.1}}, ("throughput_uncertainty", "a100")),
        ({"throughput_uncertainty": 0.1}, ("throughput_uncertainty",)),
    ],
)
def test_a_bad_bound_is_refused_naming_it(fields: dict[str, Any], loc: tuple[str, ...]) -> None:
    with pytest.raises(InputError) as caught:
        solve(_with_first_job(**fields), "robust_max_min")
    assert caught.value.errors[0].loc == ("snapshot", "jobs", 0, *loc)


@pytest.mark.parametrize("value", [-0.1, 1.1, "0.3"])
def test_a_bad_default_is_refused_naming_the_option(value: Any) -> None:
    with pytest.raises(InputError) as caught:
        solve(BASE, "robust_max_min", uncertainty=value)
    assert caught.value.errors[0].loc[-1] == "uncertainty"


def test_hand_solved_two_jobs() -> None:
    """One v100, job a known within 50 % on it, b exactly: with the stated reference
    (prop = T/2), shares are 2·(1−δ)·T x / T = 2(1−δ)x: a gets 1·x_a, b gets 2·x_b; max-min
    equalizes at x_a = 2/3, x_b = 1/3, t = 2/3."""
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 1}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 4.0}, "throughput_uncertainty": {"v100": 0.5}},
            {"id": "b", "throughput": {"v100": 1.0}},
        ],
    }
    result = solve(snapshot, "robust_max_min", reference="stated", pareto=False)
    assert result.objective == pytest.approx(2 / 3)
    assert result.job("a").allocation["v100"] == pytest.approx(2 / 3)
    assert result.job("a").metrics["guaranteed_throughput"] == pytest.approx(4 / 3)
    assert result.job("a").normalized_share == pytest.approx(4 / 3)


def test_a_job_that_may_not_progress_at_all_pins_the_stated_level_at_zero() -> None:
    """δ = 1 on a's only type: its worst-case throughput is 0 whatever it gets, so no positive
    absolute guarantee exists (stated); against its own true reference its share s x / (N/C)
    does not depend on T' at all (box), and it is the other job that binds."""
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}, {"name": "k80", "count": 1}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 1.0}, "throughput_uncertainty": {"v100": 1.0}},
            {"id": "b", "throughput": {"v100": 2.0, "k80": 1.0}},
        ],
    }
    stated = solve(snapshot, "robust_max_min", reference="stated", uncertainty=0.2)
    assert stated.status is Status.OPTIMAL and stated.objective == 0.0
    box = solve(snapshot, "robust_max_min", uncertainty=0.2)
    assert box.status is Status.OPTIMAL
    assert box.objective == pytest.approx(linprog_robust(snapshot, 0.2, "box"))
    assert box.job("a").metrics["guaranteed_share"] == pytest.approx(
        1.5 * box.job("a").allocation.get("v100", 0.0)
    )


def test_merging_identical_jobs_keeps_the_level() -> None:
    snapshot = with_uncertainty(gavel_snapshot(40, seed=9), 9, 0.3)
    for job in snapshot["jobs"][1::3]:
        job.pop("throughput_uncertainty", None)  # many identical jobs: same type, same bounds
    merged = solve(snapshot, "robust_max_min", uncertainty=0.3)
    apart = solve(snapshot, "robust_max_min", uncertainty=0.3, merge_identical=False)
    groups = merged.solver.merged_groups
    assert groups is not None and groups < len(snapshot["jobs"])
    assert merged.objective == pytest.approx(apart.objective, rel=1e-7)
    assert_feasible_allocation(merged, snapshot)
