"""Exact admission against the independent reference's brute force on tiny snapshots, and every
answer checked against the rules: capacity, whole gangs, consolidated sensitive jobs, running
jobs never moved."""

from __future__ import annotations

from typing import Any

import pytest

from apportion import solve
from tests.formulations.tiresias.brute import random_snapshot
from tests.formulations.tiresias.reference import answer_score, best_admission, fewest

LIMITS = [100.0, 300.0]


def check_rules(snapshot: dict[str, Any], result: Any, sensitive: set[str]) -> list[bool]:
    sizes = {n["id"]: n["gpus"] for n in snapshot["nodes"]}
    used = dict.fromkeys(sizes, 0)
    runs = []
    for job, got in zip(snapshot["jobs"], result.jobs, strict=True):
        placed = got.placement
        runs.append(placed is not None)
        if placed is None:
            assert got.reason, f"{job['id']} waits without a reason"
            continue
        assert sum(placed.values()) == job["scale_factor"]
        if "placement" in job:
            assert placed == job["placement"], "a running job was moved"
        if job["id"] in sensitive and job["scale_factor"] > 1:
            assert len(placed) <= fewest(list(sizes.values()), job["scale_factor"])
        for node, gpus in placed.items():
            used[node] += gpus
    assert all(used[n] <= sizes[n] for n in sizes)
    return runs


@pytest.mark.parametrize("seed", range(40))
def test_exact_admission_is_the_lexicographic_optimum(seed: int) -> None:
    snapshot, sensitive = random_snapshot(seed)
    cost = 30.0 if seed % 2 else 0.0
    cap = 1 if seed % 3 == 0 else None
    options = {"thresholds": LIMITS, "preemption_cost": cost, "max_preemptions": cap}
    result = solve(snapshot, policy="tiresias_las", options=options)
    assert result.status.value == "optimal"
    runs = check_rules(snapshot, result, sensitive)
    assert answer_score(snapshot, options, runs, False) == best_admission(snapshot, options, False)


@pytest.mark.parametrize("seed", range(20))
def test_greedy_admission_keeps_the_rules(seed: int) -> None:
    snapshot, sensitive = random_snapshot(seed)
    options = {"thresholds": LIMITS, "admission": "greedy", "max_preemptions": 1}
    result = solve(snapshot, policy="tiresias_las", options=options)
    runs = check_rules(snapshot, result, sensitive)
    stopped = [j for j, r in zip(snapshot["jobs"], runs, strict=True) if "placement" in j and not r]
    assert len(stopped) <= 1
