"""Makespan (FORMULATIONS §2): hand-solved optima, bisection oracle, input errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.refdata.synthetic import gavel_snapshot
from apportion.solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.formulations.fairness.lp_oracle import Cluster, bisect, random_snapshot

# Two types, one GPU each; a = (slow 1, fast 3), b = (slow 1, fast 1.5), 3 steps each. In time
# units: a takes e seconds of slow and 1 − e/3 of fast; b gets the rest of fast (M − 1 + e/3)
# and of slow. b's 1.5·fast + slow with its own time ≤ M is largest at e = 1.5(M − 1), giving
# 1.75 M − 0.75 ≥ 3, so M = 15/7 with X_a = (0.8, 0.2), X_b = (0.2, 0.8).
HETEROGENEOUS = {
    "gpu_types": [{"name": "slow", "count": 1}, {"name": "fast", "count": 1}],
    "jobs": [
        {"id": "a", "throughput": {"slow": 1, "fast": 3}, "steps_remaining": 3},
        {"id": "b", "throughput": {"slow": 1, "fast": 1.5}, "steps_remaining": 3},
    ],
}


def test_heterogeneous_hand_solved() -> None:
    result = solve(HETEROGENEOUS, policy="makespan")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(15 / 7, rel=1e-9)
    x = assert_feasible_allocation(result, HETEROGENEOUS)
    assert x == pytest.approx(np.array([[0.8, 0.2], [0.2, 0.8]]), abs=1e-9)
    assert [j.metrics["finish_time"] for j in result.jobs] == pytest.approx([15 / 7, 15 / 7])


def test_gang_and_finished_and_unplaceable_jobs() -> None:
    # One type with 2 GPUs: a needs 3 GPU-s, c (gang of 2 at 2 steps/s, 2 steps) 2 GPU-s; with b's
    # 1 GPU-s that is 6 GPU-s on 2 GPUs, and a alone needs 3 s: M = 3. "done" has no steps left,
    # "nowhere" cannot run: both get nothing, with reasons; the makespan covers the rest.
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 3},
            {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 1},
            {"id": "c", "scale_factor": 2, "throughput": {"v100": 2}, "steps_remaining": 2},
            {"id": "done", "throughput": {"v100": 1}, "steps_remaining": 0},
            {"id": "nowhere", "throughput": {}, "steps_remaining": 5},
        ],
    }
    result = solve(snapshot, policy="makespan")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(3.0, rel=1e-9)
    assert_feasible_allocation(result, snapshot)
    assert result.job("done").metrics["finish_time"] == 0.0
    assert result.job("done").reason == "no steps remaining"
    assert result.job("nowhere").metrics["finish_time"] is None
    assert "no positive throughput" in (result.job("nowhere").reason or "")
    assert any("never finish" in w for w in result.warnings)


def test_missing_steps_is_an_input_error_naming_every_job() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 1}},
            {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 4},
            {"id": "c", "throughput": {"v100": 1}},
        ],
    }
    with pytest.raises(InputError) as info:
        solve(snapshot, policy="makespan")
    locs = [e.loc for e in info.value.errors]
    assert locs == [
        ("snapshot", "jobs", 0, "steps_remaining"),
        ("snapshot", "jobs", 2, "steps_remaining"),
    ]
    assert "makespan" in info.value.errors[0].msg


@pytest.mark.parametrize("seed", range(8))
def test_equals_bisection_over_feasibility_lps(seed: int) -> None:
    rng = np.random.default_rng(seed)
    snapshot = random_snapshot(rng, int(rng.integers(2, 6)), int(rng.integers(1, 4)))
    cluster = Cluster.of(snapshot)
    steps = np.array([j["steps_remaining"] for j in snapshot["jobs"]])
    result = solve(snapshot, policy="makespan")
    assert result.status is Status.OPTIMAL
    runnable = cluster.t.max(axis=1) > 0
    assert runnable.all()  # the generator guarantees a usable type per job

    def feasible(makespan: float) -> bool:
        return cluster.feasible(steps / makespan)

    alone = float((steps / cluster.t.max(axis=1)).max())  # no job finishes sooner alone
    optimum = bisect(feasible, 0.5 * alone, 1e4)
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    x = assert_feasible_allocation(result, snapshot)
    finish = steps / (cluster.t * x).sum(axis=1)
    assert finish.max() == pytest.approx(result.objective, rel=1e-9)
    # No feasible allocation does better: random feasible allocations are all slower.
    for _ in range(50):
        y = rng.random(cluster.t.shape) * (cluster.t > 0)
        y /= np.maximum(y.sum(axis=1, keepdims=True), 1.0)
        y *= np.minimum(1.0, cluster.n / np.maximum(cluster.s @ y, 1e-12))[None, :]
        eff = (cluster.t * y).sum(axis=1)
        assert (steps / eff).max() >= result.objective * (1 - 1e-9)


def test_grouping_matches_the_ungrouped_lp() -> None:
    rng = np.random.default_rng(7)
    snapshot = gavel_snapshot(300, seed=3)
    for job in snapshot["jobs"]:
        job["steps_remaining"] = float(rng.uniform(1e3, 1e6))
    grouped = solve(snapshot, policy="makespan")
    plain = solve(snapshot, policy="makespan", options={"merge_identical": False})
    assert grouped.status is Status.OPTIMAL and plain.status is Status.OPTIMAL
    assert grouped.solver.merged_groups is not None and grouped.solver.merged_groups < 300
    assert grouped.objective == pytest.approx(plain.objective, rel=1e-7)
    assert_feasible_allocation(grouped, snapshot)


DATA = Path(__file__).parent / "data"


def _runnable_snapshot(snapshot: dict) -> tuple[dict, np.ndarray]:
    """The jobs that can run and have steps left (the ones a makespan covers)."""
    cluster = Cluster.of(snapshot)
    steps = np.array([j.get("steps_remaining", 0.0) for j in snapshot["jobs"]])
    keep = (cluster.t.max(axis=1) > 0) & (steps > 0)
    jobs = [j for j, k in zip(snapshot["jobs"], keep, strict=True) if k]
    return {**snapshot, "jobs": jobs}, steps[keep]


def _makespan_by_work_fractions(snapshot: dict) -> float:
    kept, steps = _runnable_snapshot(snapshot)
    cluster = Cluster.of(kept)
    alone = float((steps / cluster.t.max(axis=1)).max())
    return bisect(lambda m: cluster.feasible_work(steps / m), 0.5 * alone, 1e3 * alone, 1e-9)


def test_a_job_needing_1e_10_of_its_time_is_not_dropped() -> None:
    """The test vector where one job needs ~1.6e-10 of its time at the optimum (≈ 2.13e7 s):
    dropping it made the makespan infinite."""
    snapshot = json.loads((DATA / "makespan_tiny_fraction.json").read_text())
    result = solve(snapshot, policy="makespan")
    assert result.status is Status.OPTIMAL
    assert math.isfinite(result.objective or math.inf)
    assert result.objective == pytest.approx(_makespan_by_work_fractions(snapshot), rel=1e-6)
    assert result.summary["lower_bound"] == pytest.approx(result.objective, rel=1e-6)
    finish = [j.metrics["finish_time"] for j in result.jobs if j.metrics["finish_time"]]
    assert max(finish) == pytest.approx(result.objective, rel=1e-9)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_jobs_needing_tiny_time_fractions_finish(seed: int) -> None:
    """Long jobs next to jobs with a few steps left at high throughput: at the optimum the
    short ones need 1e-12–1e-8 of their time."""
    rng = np.random.default_rng(seed)
    snapshot = random_snapshot(rng, int(rng.integers(2, 5)), int(rng.integers(1, 4)))
    for job in snapshot["jobs"]:
        job["steps_remaining"] = float(10 ** rng.uniform(6, 8))
    names = [g["name"] for g in snapshot["gpu_types"]]
    for i in range(int(rng.integers(1, 3))):
        snapshot["jobs"].append(
            {
                "id": f"quick{i}",
                "throughput": {
                    names[int(rng.integers(len(names)))]: float(10 ** rng.uniform(3, 4))
                },
                "steps_remaining": float(rng.uniform(1, 50)),
            }
        )
    result = solve(snapshot, policy="makespan")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(_makespan_by_work_fractions(snapshot), rel=1e-6)
    assert all(j.metrics["finish_time"] is not None for j in result.jobs)
    assert max(j.metrics["finish_time"] for j in result.jobs) <= result.objective * (1 + 1e-9)
