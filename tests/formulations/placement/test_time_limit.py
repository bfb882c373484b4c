"""At its time limit a large placement answers with a whole schedule: the best one found or the
greedy one, as far as it got, its status saying it is not proven (`feasible` or `fallback`,
termination `time_limit`). Checked on DeepShare's trace at 128 and 256 nodes of 8 GPUs with a
limit far below what the search needs; the answer is checked, never timed."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from typing import Any

import pytest

from apportion import solve
from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from apportion.solver.status import Status, Termination

GPUS_PER_NODE = 8


@cache
def _table() -> dict[str, Any]:
    return read_contention_csv(SOURCE / "deepshare_shared_thp_ratio.csv").model_dump()


def _snapshot(nodes: int) -> dict[str, Any]:
    """The trace twice over (ids kept apart), two thirds of the cluster's worth of jobs running
    at random places, 200 waiting, each with work left for SRTF."""
    trace = read_trace(SOURCE / "deepshare_trace0.json")
    trace = trace + [{**job, "id": f"{job['id']}-again"} for job in trace]
    snapshot = trace_snapshot(
        trace, nodes=nodes, gpus_per_node=GPUS_PER_NODE, running=nodes * 2 // 3, candidates=200
    )
    rng = random.Random(nodes)
    for job in snapshot["jobs"]:
        job["steps_remaining"] = float(rng.randint(1, 100_000))
        job["throughput"] = {"gpu": 1.0}
    snapshot.pop("policy")
    snapshot["gpu_types"] = [{"name": "gpu", "count": nodes * GPUS_PER_NODE}]
    return {**snapshot, "contention": _table()}


def _check_whole(result: Any, snapshot: dict[str, Any], moves: str) -> None:
    """Every node within its GPUs; every job either placed whole or not running with a reason;
    a running job that may not move where it ran."""
    load: Counter[str] = Counter()
    for job, spec in zip(result.jobs, snapshot["jobs"], strict=True):
        assert job.id == str(spec["id"])
        if job.placement:
            demand = spec.get("scale_factor") or sum(spec["placement"].values())
            assert sum(job.placement.values()) == demand, job.id
            load.update(job.placement)
        else:
            assert job.reason, f"{job.id} does not run and says nothing"
        if "placement" in spec and moves == "none":
            assert job.placement == spec["placement"], f"{job.id} moved"
    assert all(load[node["id"]] <= node["gpus"] for node in snapshot["nodes"])


CASES = [
    (128, {"objective": "schedule", "moves": "none"}),
    (256, {"objective": "schedule", "moves": "preempt"}),
    (256, {"objective": "schedule", "moves": "migrate"}),
    (128, {"objective": "linear", "w1": 0.5}),
    (256, {"objective": "reference", "w1": 0.5}),
]


@pytest.mark.parametrize(("nodes", "options"), CASES)
def test_a_large_placement_answers_a_whole_schedule_at_its_time_limit(
    nodes: int, options: dict[str, Any]
) -> None:
    snapshot = _snapshot(nodes)
    result = solve(snapshot, policy="contention_placement", options={**options, "time_limit": 0.05})
    # Cut short at the limit, or (on a machine fast enough) proven: never `optimal` unproven.
    assert (result.status, result.termination) in {
        (Status.FEASIBLE, Termination.TIME_LIMIT),
        (Status.FALLBACK, Termination.TIME_LIMIT),
        (Status.OPTIMAL, Termination.OPTIMAL),
    }
    _check_whole(result, snapshot, options.get("moves", "none"))
    assert result.summary["gpus_used"] > 0
