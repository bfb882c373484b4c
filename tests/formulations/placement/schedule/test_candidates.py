"""Which waiting jobs the schedule objective offers its model: identical jobs beyond what could
run at once are left out, but only on GPUs no solution can free (a running job that may be
preempted holds nothing for sure); and where a job without a priority key ranks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from apportion import solve
from apportion.solver.status import Status

DATA = Path(__file__).parents[1] / "data"


def _states(result: Any) -> dict[str, str]:
    return {job.id: job.metrics["state"] for job in result.jobs}


def test_a_preemptible_running_job_does_not_hide_the_waiting_jobs_behind_it() -> None:
    """r (150 s left) holds the 4-GPU node; a (60 s) outranks it, b (1000 s) ranks below it.
    Under preempt, SRTF stops r and runs a and b on the whole node (hand-solved: a alone uses
    2 GPUs, a and b use 4, and r cannot run next to a)."""
    case = json.loads((DATA / "schedule_candidates_idle.json").read_text())
    result = solve(case["snapshot"], policy=case["policy"], options=case["options"])
    assert result.status is Status.OPTIMAL
    assert _states(result) == {"r": "preempted", "a": "started", "b": "started"}
    assert result.summary["gpus_used"] == 4
    assert all("identical jobs" not in (job.reason or "") for job in result.jobs)


def _queue(waiting: int) -> dict[str, Any]:
    """One 4-GPU node, a running 2-GPU job with the least work left, and `waiting` identical
    1-GPU jobs."""
    job = {"scale_factor": 1, "throughput": {"gpu": 1.0}, "steps_remaining": 500.0}
    return {
        "gpu_types": [{"name": "gpu", "count": 4}],
        "nodes": [{"id": "n0", "gpus": 4, "gpu_type": "gpu"}],
        "jobs": [
            {
                "id": "r",
                "scale_factor": 2,
                "throughput": {"gpu": 1.0},
                "steps_remaining": 10.0,
                "placement": {"n0": 2},
            },
            *({"id": f"c{i}", **job} for i in range(waiting)),
        ],
    }


def test_identical_jobs_beyond_the_free_gpus_wait_with_that_reason() -> None:
    """r cannot stop (moves none): two of the three identical jobs fill the 2 free GPUs, the
    third is never offered, and says why."""
    result = solve(_queue(3), policy="contention_placement", options={"moves": "none"})
    assert result.status is Status.OPTIMAL
    assert _states(result) == {"r": "kept", "c0": "started", "c1": "started", "c2": "waiting"}
    assert "identical jobs ahead" in (result.job("c2").reason or "")
    assert result.summary["candidates"] == 2


def test_a_job_with_no_gpu_left_to_it_waits_for_capacity_not_for_identical_jobs() -> None:
    """A 4-GPU job next to r (moves none) can never run: no identical job is ahead of it."""
    snapshot = _queue(0)
    snapshot["jobs"].append(
        {"id": "big", "scale_factor": 4, "throughput": {"gpu": 1.0}, "steps_remaining": 5.0}
    )
    result = solve(snapshot, policy="contention_placement", options={"moves": "none"})
    assert _states(result) == {"r": "kept", "big": "waiting"}
    reason = result.job("big").reason or ""
    assert "hold every GPU it could use" in reason and "identical" not in reason


def _keyless(levels: int) -> Any:
    """One 2-GPU node, room for one of two 2-GPU jobs: `known` has 10⁶ s of work left, `unknown`
    gives no steps left nor a remaining time."""
    snapshot = {
        "gpu_types": [{"name": "gpu", "count": 2}],
        "nodes": [{"id": "n0", "gpus": 2, "gpu_type": "gpu"}],
        "jobs": [
            {"id": "unknown", "scale_factor": 2, "throughput": {"gpu": 1.0}},
            {
                "id": "known",
                "scale_factor": 2,
                "throughput": {"gpu": 1.0},
                "steps_remaining": 1e6,
            },
        ],
    }
    options = {"priority_levels": levels, "w1": 0.0}
    return solve(snapshot, policy="contention_placement", options=options)


def test_a_job_without_a_key_ranks_after_every_job_with_one() -> None:
    """SRTF: the job of unknown length backfills; the longest known job still goes first, and
    the unknown one sits in a level of its own below it."""
    result = _keyless(levels=4)
    assert result.status is Status.OPTIMAL
    assert _states(result) == {"unknown": "waiting", "known": "started"}
    levels = {job.id: job.metrics["priority_level"] for job in result.jobs}
    assert levels == {"known": 0, "unknown": 1}
