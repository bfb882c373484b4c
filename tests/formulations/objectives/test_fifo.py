"""Heterogeneity-aware FIFO (FORMULATIONS §5): hand-traced queues and invariants."""

from __future__ import annotations

import numpy as np
import pytest

from solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.cases_objectives import FIFO
from tests.formulations.fairness.lp_oracle import Cluster, random_snapshot

# k80 × 3, v100 × 1. j1 (s 1) runs fastest on v100 → v100. j2 (s 2) prefers v100, which is
# full → k80 (1 left). j3 (s 2) fits nowhere. j4 (s 1, arrives with j3's time but a later id
# than "j3") fits on the last k80 GPU: strict FIFO makes it wait behind j3, backfill starts it.
QUEUE = FIFO


def test_strict_queue_hand_traced() -> None:
    result = solve(QUEUE, policy="fifo")
    assert result.status is Status.OPTIMAL
    assert_feasible_allocation(result, QUEUE)
    assert result.job("j1").allocation == {"v100": 1.0}
    assert result.job("j2").allocation == {"k80": 1.0}
    assert result.job("j3").allocation == {}
    assert "no GPU type it can run on has 2 free GPUs" in (result.job("j3").reason or "")
    assert result.job("j4").allocation == {}
    assert result.job("j4").reason == "waiting behind 'j3' (strict FIFO)"
    assert result.objective == 2
    assert result.summary["blocked_by"] == "j3"
    assert [result.job(j).metrics["queue_position"] for j in ("j1", "j2", "j3", "j4")] == [
        1,
        2,
        3,
        4,
    ]


def test_backfill_lets_later_jobs_that_fit_start() -> None:
    result = solve(QUEUE, policy="fifo", options={"mode": "backfill"})
    assert result.job("j4").allocation == {"k80": 1.0}
    assert result.job("j3").allocation == {}
    assert result.objective == 3
    assert result.summary["blocked_by"] is None


def test_jobs_that_can_never_run_do_not_block_the_queue() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 2}],
        "jobs": [
            {"id": "wide", "arrival_time": 0, "scale_factor": 4, "throughput": {"v100": 1}},
            {"id": "next", "arrival_time": 1, "throughput": {"v100": 1}},
        ],
    }
    result = solve(snapshot, policy="fifo")
    assert result.job("next").allocation == {"v100": 1.0}
    assert "exceeds the GPU count" in (result.job("wide").reason or "")


def test_missing_arrival_time_is_an_input_error() -> None:
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [{"id": "a", "throughput": {"v100": 1}}],
    }
    with pytest.raises(InputError) as info:
        solve(snapshot, policy="fifo")
    assert info.value.errors[0].loc == ("snapshot", "jobs", 0, "arrival_time")


@pytest.mark.parametrize("mode", ["strict", "backfill"])
@pytest.mark.parametrize("seed", range(10))
def test_invariants_on_random_queues(seed: int, mode: str) -> None:
    rng = np.random.default_rng(400 + seed)
    snapshot = random_snapshot(rng, int(rng.integers(3, 12)), int(rng.integers(1, 4)))
    for job in snapshot["jobs"]:
        job["arrival_time"] = float(rng.integers(0, 4))  # many ties, broken by id
    result = solve(snapshot, policy="fifo", options={"mode": mode})
    x = assert_feasible_allocation(result, snapshot)  # never over-subscribes a type
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert (x.sum(axis=1) <= 1).all()
    cluster = Cluster.of(snapshot)
    order = sorted(
        range(len(snapshot["jobs"])),
        key=lambda j: (snapshot["jobs"][j]["arrival_time"], snapshot["jobs"][j]["id"]),
    )
    running = x.sum(axis=1) > 0
    placeable = cluster.t.max(axis=1) > 0
    queue = [j for j in order if placeable[j]]
    if mode == "strict":
        # No later job overtakes: the running jobs are a prefix of the (placeable) queue.
        flags = [running[j] for j in queue]
        assert flags == sorted(flags, reverse=True)
    # Replaying the queue: each running job is on its fastest type that had room when its turn came.
    free = cluster.n.copy()
    for j in order:
        if running[j]:
            k = int(np.argmax(x[j]))
            room = (cluster.t[j] > 0) & (free >= cluster.s[j])
            assert room[k] and cluster.t[j, k] == cluster.t[j][room].max()
            free[k] -= cluster.s[j]
        elif placeable[j] and mode == "backfill":
            assert not ((cluster.t[j] > 0) & (free >= cluster.s[j])).any()  # it really did not fit
