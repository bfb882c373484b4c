"""The schedule objective against an independent oracle (`brute`): with zero contention and no
restart cost it runs exactly the jobs SRTF (LAS) would, the lexicographically best set in key
order; with contention its optimum is the best schedule by the definition; moves, preemptions,
restarts and the candidate limit do what their options say."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apportion import solve
from apportion.solver.status import Status
from tests.formulations.placement.brute import contention_json
from tests.formulations.placement.schedule.brute import (
    SHAPES,
    lexicographic_best,
    random_snapshot,
    random_table,
    schedules,
    score,
)

ALL_SHAPES = {str(d): [list(s) for s in v] for d, v in SHAPES.items()}
EXACT = {"shapes": ALL_SHAPES, "contention_scope": "all", "mip_gap": 0.0, "moves": "migrate"}


def _ran(result: Any) -> set[str]:
    return {job.id for job in result.jobs if job.placement}


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("priority", ["srtf", "las"])
def test_without_contention_it_runs_exactly_what_srtf_or_las_would(
    seed: int, priority: str
) -> None:
    snapshot = random_snapshot(random.Random(seed))
    field = "steps_remaining" if priority == "srtf" else "attained_service"
    key = {job["id"]: job[field] for job in snapshot["jobs"]}
    if len(set(key.values())) < len(key):
        pytest.skip("tied keys: SRTF's order among them is arbitrary")
    options = {
        **EXACT,
        "w1": random.Random(seed).choice([0.0, 0.3, 0.7]),
        "priority": priority,
        "priority_levels": 8,
        "priority_tolerance": 0.0,
        "restart_seconds": 0.0,
    }
    result = solve(snapshot, policy="contention_placement", options=options)
    assert result.status is Status.OPTIMAL
    assert _ran(result) == lexicographic_best(snapshot, key)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("moves", ["migrate", "preempt", "none"])
@pytest.mark.parametrize("value", ["flat", "progress"])
def test_with_contention_its_optimum_is_the_best_schedule(
    seed: int, moves: str, value: str
) -> None:
    rng = random.Random(seed)
    snapshot = random_snapshot(rng)
    table = random_table(rng, snapshot)
    snapshot["contention"] = contention_json(table)
    w1 = rng.choice([0.2, 0.5, 0.8] + ([0.0] if value == "progress" else []))
    restart = rng.choice([0.0, 0.1, 0.5])
    options = {
        **EXACT,
        "w1": w1,
        "priority_levels": 1,
        "restart_seconds": restart * 300.0,
        "horizon_seconds": 300.0,
        "moves": moves,
        "contention_value": value,
    }
    result = solve(snapshot, policy="contention_placement", options=options)
    assert result.status is Status.OPTIMAL
    placed = {job.id: job.placement for job in result.jobs if job.placement}
    allowed = list(schedules(snapshot, moves))
    assert placed in allowed  # feasible, each in an allowed shape, moves as allowed
    progress = value == "progress"
    best = max(score(snapshot, table, s, w1, restart, progress) for s in allowed)
    assert result.objective == pytest.approx(best, abs=1e-7)
    assert score(snapshot, table, placed, w1, restart, progress) == pytest.approx(best, abs=1e-7)


def test_valued_as_progress_a_start_that_slows_its_neighbour_more_than_it_runs_waits() -> None:
    # Hand case: two 3-GPU nodes; a running 4-GPU job of class A holds 2 × 2 (1 GPU free on
    # each node); a waiting 2-GPU job of class B fits only as 2 × 1 next to it. Next to each
    # other A keeps 1/3 of its speed (CS 3.0, ℓ = 2/3) and B half (CS 2.0, ℓ = 1/2). One
    # level (π = 1), speed 1, W1 = 0.3, C = 6. Starting B adds
    # flat: 0.7·2 − 0.3·(2·1/2 + 4·2/3) = 0.3 > 0, so B starts;
    # progress: 0.7·2 − (0.3 + 0.7)·(2·1/2 + 4·2/3) = −2.27 < 0: B would make 1 GPU of
    # progress and take 2.67 from A, so B waits.
    snapshot = {
        "gpu_types": [{"name": "gpu", "count": 6}],
        "nodes": [{"id": "n0", "gpus": 3}, {"id": "n1", "gpus": 3}],
        "jobs": [
            {
                "id": "a",
                "workload_class": "A",
                "placement": {"n0": 2, "n1": 2},
                "steps_remaining": 10.0,
                "throughput": {"gpu": 1.0},
            },
            {
                "id": "b",
                "workload_class": "B",
                "scale_factor": 2,
                "steps_remaining": 20.0,
                "throughput": {"gpu": 1.0},
            },
        ],
    }
    table = {
        (("A", 4, 2), ("B", 2, 2)): 3.0,
        (("B", 2, 2), ("A", 4, 2)): 2.0,
    }
    snapshot["contention"] = contention_json(table)
    options = {"shapes": {"2": [[2, 1]], "4": [[2, 2]]}, "w1": 0.3, "priority_levels": 1}
    flat = solve(snapshot, policy="contention_placement", options=options)
    progress = solve(
        snapshot, policy="contention_placement", options={**options, "contention_value": "progress"}
    )
    assert _ran(flat) == {"a", "b"}
    assert _ran(progress) == {"a"}
    assert flat.objective == pytest.approx((0.7 * 4 + 0.7 * 2 - 0.3 * (4 * 2 / 3 + 2 / 2)) / 6)
    assert progress.objective == pytest.approx((0.7 * 4) / 6)


def _pair(**options: Any) -> Any:
    """A and B share nodes n0 and n1 (one GPU each), each halving the other's speed; n2 and n3
    are idle."""
    table = {(("A", 2, 2), ("B", 2, 2)): 2.0, (("B", 2, 2), ("A", 2, 2)): 2.0}
    snapshot = {
        "nodes": [{"id": f"n{i}", "gpus": 2} for i in range(4)],
        "jobs": [
            {
                "id": "a",
                "workload_class": "A",
                "placement": {"n0": 1, "n1": 1},
                "steps_remaining": 10.0,
            },
            {
                "id": "b",
                "workload_class": "B",
                "placement": {"n0": 1, "n1": 1},
                "steps_remaining": 20.0,
            },
        ],
        "contention": contention_json(table),
    }
    chosen = {"w1": 0.5, "shapes": {"2": [[2, 1]]}, "horizon_seconds": 300.0, **options}
    return solve(snapshot, policy="contention_placement", options=chosen)


def test_a_job_slowed_by_its_neighbour_moves_when_the_restart_is_worth_it() -> None:
    """Moving b to n2, n3 frees both of half their throughput: W1·(2·0.5 + 2·0.5)/8 = 0.125
    against a restart of W2·2·(30/300)/8 = 0.0125."""
    result = _pair(restart_seconds=30.0, moves="migrate")
    states = {job.id: job.metrics["state"] for job in result.jobs}
    assert sorted(states.values()) == ["kept", "moved"]
    placed = [job.placement for job in result.jobs]
    assert not set(placed[0]) & set(placed[1])
    assert result.summary["moved"] == 1


def test_it_stays_when_the_restart_costs_more_or_moves_are_off() -> None:
    """A restart of 300 s over a 300-s horizon costs W2·2/8 = 0.125 + ε: more than the gain; and
    stopping b (losing its W2·2/8 = 0.125 of GPUs) to spare a W1·2·0.5/8 = 0.0625 is no gain."""
    cases = [
        {"restart_seconds": 300.0, "moves": "migrate"},
        {"restart_seconds": 0.0, "moves": "none"},
        {"restart_seconds": 30.0, "moves": "preempt"},
    ]
    for options in cases:
        result = _pair(**options)
        assert {job.metrics["state"] for job in result.jobs} == {"kept"}
        assert result.jobs[0].metrics["contention_sensitivity"] == pytest.approx(2.0)


def test_each_sensitivity_says_where_it_came_from() -> None:
    """The table measures A next to B (CS 2) but not B next to A: a's CS is exact, b's falls back
    to the default 1.0, and the answer counts both pairs and warns about the guessed one."""
    table = {(("A", 2, 2), ("B", 2, 2)): 2.0}
    snapshot = {
        "nodes": [{"id": f"n{i}", "gpus": 2} for i in range(2)],
        "jobs": [
            {"id": "a", "workload_class": "A", "placement": {"n0": 1, "n1": 1}},
            {"id": "b", "workload_class": "B", "placement": {"n0": 1, "n1": 1}},
        ],
        "contention": contention_json(table),
    }
    result = solve(snapshot, policy="contention_placement", options={"w1": 0.5})
    a, b = result.job("a").metrics, result.job("b").metrics
    assert (a["cs_source"], a["worst_co_runner"], a["contention_sensitivity"]) == (
        "exact",
        "b",
        2.0,
    )
    assert (b["cs_source"], b["worst_co_runner"], b["contention_sensitivity"]) == (None, None, 1.0)
    assert result.summary["cs_sources"] == {"exact": 1, "default": 1}
    assert "co-located pairs without a measured contention entry: 1 by default" in result.warnings


def test_least_attained_service_preempts_a_running_job_for_a_fresh_one() -> None:
    """LAS: the fresh job (0 s attained) outranks the running one (500 s) on a full node."""
    snapshot = {
        "nodes": [{"id": "n0", "gpus": 2}],
        "jobs": [
            {"id": "old", "placement": {"n0": 2}, "attained_service": 500.0},
            {"id": "new", "scale_factor": 2, "attained_service": 0.0},
        ],
    }
    options = {"w1": 0.5, "priority": "las", "moves": "preempt", "restart_seconds": 60.0}
    result = solve(snapshot, policy="contention_placement", options=options)
    states = {job.id: job.metrics["state"] for job in result.jobs}
    assert states == {"old": "preempted", "new": "started"}
    assert result.job("old").reason.startswith("preempted")


def test_the_candidate_limit_offers_the_head_of_the_queue() -> None:
    """Three waiting jobs, room for all; `candidates` 1 offers only the shortest."""
    snapshot = {
        "nodes": [{"id": "n0", "gpus": 4}],
        "jobs": [
            {
                "id": f"j{i}",
                "scale_factor": 1,
                "steps_remaining": float(10 - i),
                "throughput": {"gpu": 1.0},
            }
            for i in range(3)
        ],
        "gpu_types": [{"name": "gpu", "count": 4}],
    }
    result = solve(snapshot, policy="contention_placement", options={"candidates": 1})
    assert _ran(result) == {"j2"}
    assert "beyond the first 1 candidates" in (result.job("j0").reason or "")
    assert result.summary["candidates"] == 1
