"""Water filling (FORMULATIONS §1a): hand-solved levels, leximin optimality checked with one
independent LP per job, agreement with max-min fairness, and every backend path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from apportion.formulations.fairness.level_solvers import WarmLevels
from apportion.refdata.synthetic import gavel_snapshot, random_snapshot
from apportion.solver import SolveResult, Status, Termination, solve
from apportion.solver.backends import Solution
from tests.fairness_reference import Instance, check_result, leximin_gap, reference_water_filling
from tests.formulations.fairness.max_min_oracle import scaled_max_min
from tests.formulations.fairness.test_pareto import idle_but_usable
from tests.formulations.fairness.wide import not_leximin_below, wide_snapshot

# Three GPU types with one GPU each, T = 1 everywhere a job runs, so prop = 1/3 and u = 3x.
# Type t1 hosts three jobs (u = 3 · 1/3 = 1), t2 two (u = 1.5), t3 one (u = 3): three levels,
# frozen in iterations 1, 2, 3. A single max-min LP only promises the minimum, 1.
THREE_LEVELS = {
    "gpu_types": [{"name": n, "count": 1} for n in ("t1", "t2", "t3")],
    "jobs": [{"id": f"a{i}", "throughput": {"t1": 1.0}} for i in range(3)]
    + [{"id": f"b{i}", "throughput": {"t2": 1.0}} for i in range(2)]
    + [{"id": "c", "throughput": {"t3": 1.0}}],
}

# k80 and v100, one GPU each (C = 2). a runs on k80 only with T = 2 (prop = 1, u_a = 2x_a ≤ 2);
# b (w = 1) and c (w = 2) share the v100 with T = 1 (prop = 1/2): u_b = 2x_b, u_c = x_c. Level 1:
# x_b = t/2, x_c = t, x_b + x_c ≤ 1 ⇒ t = 2/3 (b, c frozen); level 2: a alone on k80, u_a = 2.
WEIGHTED = {
    "gpu_types": [{"name": "k80", "count": 1}, {"name": "v100", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"k80": 2.0}},
        {"id": "b", "weight": 1, "throughput": {"v100": 1.0}},
        {"id": "c", "weight": 2, "throughput": {"v100": 1.0}},
    ],
}


def shares(result: object) -> dict[str, float]:
    return {job.id: job.normalized_share for job in result.jobs}  # type: ignore[attr-defined]


def test_three_levels_hand_solved() -> None:
    result = solve(THREE_LEVELS, policy="water_filling")
    assert result.status is Status.OPTIMAL
    expected = {"a0": 1, "a1": 1, "a2": 1, "b0": 1.5, "b1": 1.5, "c": 3}
    assert shares(result) == pytest.approx(expected, rel=1e-9)
    assert result.objective == pytest.approx(1.0)
    assert {j.id: j.metrics["iteration"] for j in result.jobs} == {
        "a0": 1,
        "a1": 1,
        "a2": 1,
        "b0": 2,
        "b1": 2,
        "c": 3,
    }
    assert {j.id: j.metrics["level"] for j in result.jobs} == pytest.approx(expected)
    assert result.summary["distinct_levels"] == 3
    check_result(result, Instance(THREE_LEVELS))


def test_weights_hand_solved() -> None:
    result = solve(WEIGHTED, policy="water_filling")
    assert shares(result) == pytest.approx({"a": 2.0, "b": 2 / 3, "c": 2 / 3}, rel=1e-9)
    x = {j.id: j.allocation for j in result.jobs}
    assert x["b"]["v100"] == pytest.approx(1 / 3) and x["c"]["v100"] == pytest.approx(2 / 3)
    # max-min fairness reaches the same minimum but need not give a its 2.
    assert solve(WEIGHTED).objective == pytest.approx(result.objective, rel=1e-9)


SMALL = [random_snapshot(9, 3, seed=seed, gpus_per_type=3) for seed in range(4)]


@pytest.mark.parametrize("snapshot", SMALL, ids=lambda s: f"{len(s['jobs'])} jobs")
def test_random_small_is_leximin_optimal(snapshot: dict) -> None:
    result = solve(snapshot, policy="water_filling")
    assert result.status is Status.OPTIMAL
    inst = Instance(snapshot)
    v = check_result(result, inst)
    u = np.divide(v, inst.w, out=np.zeros_like(v), where=inst.active)
    reported = np.array([j.normalized_share for j in result.jobs])
    np.testing.assert_allclose(reported, u, rtol=1e-7, atol=1e-9)
    assert leximin_gap(inst, u, inst.w) < 1e-6
    # The slow reference (one LP per candidate per level) finds the same vector.
    np.testing.assert_allclose(v, reference_water_filling(inst, lambda a: inst.w), rtol=1e-6)
    # Its minimum is the single max-min LP's optimum.
    assert result.objective == pytest.approx(solve(snapshot).objective, rel=1e-7)
    levels = np.array([j.metrics["level"] or 0.0 for j in result.jobs])
    np.testing.assert_allclose(levels[inst.active], u[inst.active], rtol=1e-7)


@pytest.mark.parametrize("backend", ["clarabel", "highs"])
def test_every_backend_and_unmerged_agree(backend: str) -> None:
    snapshot = gavel_snapshot(40, seed=4, gpus_per_type=6)
    merged = solve(snapshot, policy="water_filling")
    other = solve(
        snapshot, policy="water_filling", options={"backend": backend, "merge_identical": False}
    )
    assert other.status is Status.OPTIMAL
    np.testing.assert_allclose(
        sorted(shares(other).values()), sorted(shares(merged).values()), rtol=1e-6
    )
    assert merged.solver.merged_groups is not None and merged.solver.merged_groups < 40


def test_unplaceable_jobs_are_reported_not_levelled() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 3.0}},
            {"id": "nowhere", "throughput": {}},
            {"id": "wide", "scale_factor": 4, "throughput": {"v100": 9.0}},
        ],
    }
    result = solve(snapshot, policy="water_filling")
    assert result.objective == pytest.approx(1.0)
    assert result.job("nowhere").metrics["level"] is None
    assert "no positive throughput" in (result.job("nowhere").reason or "")
    assert "scale factor 4" in (result.job("wide").reason or "")


def test_a_failed_level_returns_the_last_good_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A level LP that keeps failing (a time limit, every time it is asked) ends the loop: the
    answer is the last good level's, called feasible, with a warning."""
    original = WarmLevels.solve
    calls = []

    def fail_from_second(self: WarmLevels, state: object) -> Solution:
        calls.append(1)
        solution = original(self, state)  # type: ignore[arg-type]
        if len(calls) >= 2:
            solution.status, solution.termination = Status.NO_SOLUTION, Termination.TIME_LIMIT
        return solution

    monkeypatch.setattr(WarmLevels, "solve", fail_from_second)
    result = solve(THREE_LEVELS, policy="water_filling")
    assert result.status is Status.FEASIBLE
    assert "stopped at iteration 2" in result.warnings[0]
    # The first level's answer: everyone at u ≥ 1, constraints intact.
    assert min(shares(result).values()) == pytest.approx(1.0)
    check_result(result, Instance(THREE_LEVELS))


def test_a_level_that_fails_once_is_solved_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A level LP is feasible by construction (the last level's point meets every floor): one
    that a solver calls infeasible is solved again, and water filling reaches the optimum."""
    original = WarmLevels.solve
    calls = []

    def fail_second(self: WarmLevels, state: object) -> Solution:
        calls.append(1)
        solution = original(self, state)  # type: ignore[arg-type]
        if len(calls) == 2:
            solution.status = Status.INFEASIBLE
        return solution

    monkeypatch.setattr(WarmLevels, "solve", fail_second)
    result = solve(THREE_LEVELS, policy="water_filling")
    assert result.status is Status.OPTIMAL and not result.warnings
    expected = {"a0": 1, "a1": 1, "a2": 1, "b0": 1.5, "b1": 1.5, "c": 3}
    assert shares(result) == pytest.approx(expected, rel=1e-7)


RECOVERY = json.loads((Path(__file__).parent / "data" / "level_recovery.json").read_text())


def assert_levels_hold(result: SolveResult, snapshot: dict) -> np.ndarray:
    """Checks that need no leximin reference, so hold at any conditioning: an optimal status, a
    feasible allocation whose throughputs are the reported ones, the minimum share equal to the
    independent max-min LP (in each job's own units), no idle GPU a job with time left could
    use, and every job at or above the level it froze at. Returns the shares u."""
    assert result.status is Status.OPTIMAL, result.warnings
    inst = Instance(snapshot)
    v = check_result(result, inst)
    assert result.objective == pytest.approx(scaled_max_min(snapshot), rel=1e-6)
    assert idle_but_usable(result, snapshot) == []
    u = np.divide(v, inst.w, out=np.zeros_like(v), where=inst.active)
    level = np.array([j.metrics["level"] or 0.0 for j in result.jobs])
    assert (u[inst.active] >= level[inst.active] * (1 - 1e-6)).all()
    return u


@pytest.mark.parametrize("case", RECOVERY, ids=lambda c: c["name"])
def test_level_lps_a_solver_gave_up_on_are_recovered(case: dict) -> None:
    """Snapshots found by a seeded search (weights or throughputs spanning 1e6 or more) on which
    a level LP ended infeasible, "Unknown" or "Optimal" without a feasible point, and water
    filling stopped at `feasible` (`defect` says how). Each now reaches the optimum."""
    assert_levels_hold(solve(case["snapshot"], policy="water_filling"), case["snapshot"])


# The slow reference's own LPs end "Unknown" or infeasible on the other two (its floors are
# relaxed by 1e-9 at every level, which such spans do not forgive).
REFERENCE_SOLVES = [c for c in RECOVERY if not c["name"].endswith(("625", "879"))]


@pytest.mark.parametrize("case", REFERENCE_SOLVES, ids=lambda c: c["name"])
def test_recovered_shares_are_not_below_the_slow_reference(case: dict) -> None:
    """The shares are not lexicographically below the slow reference's (an allocation computed
    independently, one LP per job and level): no job was frozen while it could rise."""
    snapshot = case["snapshot"]
    result = solve(snapshot, policy="water_filling")
    inst = Instance(snapshot)
    u = check_result(result, inst) / inst.w
    reference = reference_water_filling(inst, lambda active: np.where(active, inst.w, 0.0))
    assert not_leximin_below(u[inst.active], (reference / inst.w)[inst.active])


@pytest.mark.parametrize("seed", range(60))
def test_water_filling_reaches_the_optimum_whatever_the_weights(seed: int) -> None:
    """Property: with weights spanning 1e-6…1e6 (a level LP failed on 38 of the first 400 of
    these), water filling and hierarchical fairness end optimal and the checks above hold."""
    snapshot = wide_snapshot(seed, weights=(1e-6, 1e6))
    assert_levels_hold(solve(snapshot, policy="water_filling"), snapshot)
    with_entities = {
        **snapshot,
        "entities": [{"id": "e0", "weight": 1.0}, {"id": "e1", "weight": 3.0}],
        "jobs": [{**job, "entity": f"e{i % 2}"} for i, job in enumerate(snapshot["jobs"])],
    }
    result = solve(with_entities, policy="hierarchical")
    assert result.status is Status.OPTIMAL, result.warnings
    check_result(result, Instance(with_entities))
    assert idle_but_usable(result, with_entities) == []
