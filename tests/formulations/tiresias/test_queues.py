"""Queues, starvation promotion, the order within a queue and when an answer goes stale, by
hand; and the same rules through the policies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion import solve
from apportion.formulations.tiresias.queues import promote, queue_of


def test_queue_of_counts_the_limits_reached() -> None:
    limits = np.array([3200.0, 7200.0])
    got = queue_of(np.array([0.0, 3199.0, 3200.0, 7199.0, 7200.0, 1e9]), limits)
    assert got.tolist() == [0, 0, 1, 1, 2, 2]


def test_promotion_needs_waiting_knob_times_the_run_time() -> None:
    queue = np.array([1, 1, 1, 0, 1])
    attained = np.array([400.0, 400.0, 400.0, 400.0, 0.0])
    pending = np.array([400.0, 399.0, 800.0, 900.0, 900.0])  # knob 2 on 2 GPUs: t = 200
    gang = np.full(5, 2.0)
    waiting = np.array([True, True, False, True, True])
    got = promote(queue, attained, pending, gang, waiting, 2.0)
    # 2: running; 3: already on top; 4: never ran.
    assert got.tolist() == [True, False, False, False, False]
    assert not promote(queue, attained, pending, gang, waiting, None).any()


def node(i: int, gpus: int = 2) -> dict[str, Any]:
    return {"id": f"n{i}", "gpus": gpus}


def job(name: str, gang: int = 1, **fields: Any) -> dict[str, Any]:
    return {"id": name, "scale_factor": gang, "throughput": {"gpu": 1.0}, **fields}


def metrics(result: Any) -> dict[str, dict[str, Any]]:
    return {j.id: {**j.metrics, "placement": j.placement, "reason": j.reason} for j in result.jobs}


@pytest.mark.parametrize("admission", ["exact", "greedy"])
def test_las_serves_a_queue_by_first_start(admission: str) -> None:
    snapshot = {
        "nodes": [node(0)],
        "now": 100.0,
        "jobs": [
            job("a", started_at=50.0, attained_service=50.0, arrival_time=0.0),
            job("b", started_at=10.0, attained_service=90.0, arrival_time=5.0),
            job("c", arrival_time=1.0),
        ],
    }
    got = metrics(solve(snapshot, policy="tiresias_las", options={"admission": admission}))
    assert [got[j]["state"] for j in "abc"] == ["started", "started", "waiting"]
    assert [got[j]["rank"] for j in "abc"] == [2, 1, 3]
    assert got["c"]["wait_reason"] == "own_queue"
    assert got["b"]["priority"] == -90.0  # R_J = −W_J t_J


@pytest.mark.parametrize("admission", ["exact", "greedy"])
def test_las_keeps_a_running_job_ahead_of_one_that_started_first(admission: str) -> None:
    """One GPU: `late` runs, `early` started first but waits. Without `queue_order` the
    running job comes first; with it, the caller's order decides (lowest first, a job without
    one last)."""
    running = job("late", started_at=40.0, attained_service=50.0, placement={"n0": 1})
    waiting = job("early", started_at=10.0, attained_service=50.0)
    snapshot = {"nodes": [node(0, gpus=1)], "now": 100.0, "jobs": [waiting, running]}
    options = {"admission": admission}
    got = metrics(solve(snapshot, policy="tiresias_las", options=options))
    assert (got["late"]["state"], got["early"]["state"]) == ("running", "waiting")
    assert (got["late"]["rank"], got["early"]["rank"]) == (1, 2)
    ordered = {**snapshot, "jobs": [{**waiting, "queue_order": 0.0}, running]}
    got = metrics(solve(ordered, policy="tiresias_las", options=options))
    assert (got["early"]["state"], got["late"]["state"]) == ("started", "preempted")


def test_a_higher_queue_preempts_a_lower_one_and_says_so() -> None:
    snapshot = {
        "nodes": [node(0)],
        "jobs": [
            job("old", gang=2, placement={"n0": 2}, attained_service=9000.0, started_at=0.0),
            job("new", gang=2, arrival_time=5.0),
        ],
    }
    result = solve(snapshot, policy="tiresias_las", options={"thresholds": [3200.0]})
    got = metrics(result)
    assert got["new"]["placement"] == {"n0": 2}
    assert got["old"]["state"] == "preempted"
    assert got["old"]["wait_reason"] == "higher_queue"
    assert [got["old"]["queue"], got["new"]["queue"]] == [2, 1]
    assert result.summary["preempted"] == 1


def test_a_starved_job_is_promoted_with_promote_knob() -> None:
    snapshot = {
        "nodes": [node(0, gpus=1)],
        "jobs": [
            job("starved", attained_service=4000.0, pending_seconds=9000.0, started_at=0.0),
            job("fresh", arrival_time=50.0),
        ],
    }
    plain = metrics(solve(snapshot, policy="tiresias_las"))
    assert plain["fresh"]["state"] == "started"
    # Knob 2: it has run 4,000 s and waited 9,000 s ≥ 8,000 s: back to the top queue, where it
    # started first.
    got = metrics(solve(snapshot, policy="tiresias_las", options={"promote_knob": 2.0}))
    assert got["starved"]["promoted"] is True
    assert got["starved"]["queue"] == 1
    assert got["starved"]["state"] == "started"


def test_revisit_after_is_the_first_demotion_or_promotion() -> None:
    snapshot = {
        "nodes": [node(0, gpus=4)],
        "jobs": [
            job("runs", gang=2, attained_service=3000.0, placement={"n0": 2}, started_at=0.0),
            job("waits", gang=4, attained_service=3600.0, pending_seconds=100.0, started_at=1.0),
        ],
    }
    # Demotion of `runs`: (3,200 − 3,000) / 2 = 100 s; promotion of `waits` at knob 1: it ran
    # 900 s and waited 100: 800 s more.
    result = solve(snapshot, policy="tiresias_las", options={"promote_knob": 1.0})
    assert result.summary["revisit_after"] == pytest.approx(100.0)
    result = solve(snapshot, policy="tiresias_las", options={"thresholds": [1e6]})
    assert result.summary["revisit_after"] == pytest.approx((1e6 - 3000.0) / 2)


def test_gittins_orders_a_queue_by_index() -> None:
    # Past jobs took 100 or 10,000 GPU-seconds. A job at 50 is likely to end within its quantum,
    # one at 150 is surely long: index ½/E[min(S − a, Δ)] is far higher at 50.
    snapshot = {
        "nodes": [node(0, gpus=1)],
        "service_distribution": {"samples": [100.0, 10000.0]},
        "jobs": [
            job("early", attained_service=150.0, started_at=0.0),
            job("late", attained_service=50.0, started_at=10.0),
        ],
    }
    las = metrics(solve(snapshot, policy="tiresias_las", options={"thresholds": [1e5]}))
    assert las["early"]["state"] == "started"
    options = {"thresholds": [1e5], "quantum": "sup"}
    got = metrics(solve(snapshot, policy="tiresias_gittins", options=options))
    assert got["late"]["state"] == "started"
    assert got["late"]["priority"] > got["early"]["priority"]
