"""Heterogeneity-aware FIFO (FORMULATIONS §5): hand-traced queues and invariants."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.formulations.objectives import fifo
from apportion.solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.conformance.cases_objectives import FIFO, FIFO_GAVEL
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


@pytest.mark.parametrize("mode", ["strict", "backfill", "gavel"])
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


def test_gavel_mode_hand_traced() -> None:
    """FIFO_GAVEL's derivation: strict stops at j2, Gavel's rule skips it (its only type with
    room gives it nothing) and stops at j4, the first job no type has room for."""
    strict = solve(FIFO_GAVEL, policy="fifo")
    assert [j.id for j in strict.jobs if j.allocation] == ["j1"]
    assert strict.summary["blocked_by"] == "j2"
    gavel = solve(FIFO_GAVEL, policy="fifo", options={"mode": "gavel"})
    assert gavel.status is Status.OPTIMAL
    assert {j.id: j.allocation for j in gavel.jobs if j.allocation} == {
        "j1": {"v100": 1.0},
        "j3": {"k80": 1.0},
    }
    assert gavel.job("j2").reason == "waiting: the GPU types with 1 free GPUs give it no throughput"
    assert gavel.job("j4").reason == "waiting: no GPU type has 2 free GPUs (the queue stops here)"
    assert gavel.job("j5").reason == "waiting behind 'j4' (gavel FIFO)"
    assert gavel.summary["blocked_by"] == "j4" and gavel.summary["mode"] == "gavel"
    backfill = solve(FIFO_GAVEL, policy="fifo", options={"mode": "backfill"})
    assert {j.id for j in backfill.jobs if j.allocation} == {"j1", "j3", "j5"}


def reference_queue(snapshot: dict[str, Any], mode: str) -> tuple[dict[str, str], str | None]:
    """The rule of FORMULATIONS §5 job by job in plain Python, from the snapshot dict: the
    type each started job takes, and the job that stopped the queue."""
    counts = {g["name"]: g["count"] for g in snapshot["gpu_types"]}
    free = dict(counts)
    jobs = sorted(snapshot["jobs"], key=lambda j: (j["arrival_time"], j["id"]))
    placed: dict[str, str] = {}
    for job in jobs:
        s = job.get("scale_factor", 1)
        runs = {k: v for k, v in job["throughput"].items() if v > 0 and s <= counts[k]}
        if not runs:
            continue  # can never run: skipped, never blocks
        room = [k for k in counts if free[k] >= s]
        usable = [k for k in room if k in runs]
        if usable:
            best = max(usable, key=lambda k: (runs[k], -list(counts).index(k)))
            placed[job["id"]], free[best] = best, free[best] - s
        elif mode == "strict" or (mode == "gavel" and not room):
            return placed, job["id"]
    return placed, None


def random_queue(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    types = int(rng.integers(1, 5))
    names = [f"g{k}" for k in range(types)]
    jobs = [
        {
            "id": f"j{i:03d}",
            "arrival_time": float(rng.integers(0, 6)),
            "scale_factor": int(rng.choice([1, 1, 1, 2, 2, 3, 4, 8])),
            "throughput": {n: float(rng.uniform(0.5, 5)) for n in names if rng.random() < 0.6},
        }
        for i in range(int(rng.integers(1, 400)))
    ]
    counts = rng.integers(1, 40, types)
    return {
        "gpu_types": [{"name": n, "count": int(c)} for n, c in zip(names, counts, strict=True)],
        "jobs": jobs,
    }


@pytest.mark.parametrize("walk_first", [fifo.WALK_FIRST, 0, 7])
@pytest.mark.parametrize("mode", ["strict", "backfill", "gavel"])
@pytest.mark.parametrize("seed", range(40))
def test_vectorized_pass_matches_the_rule_job_by_job(
    seed: int, mode: str, walk_first: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass as it runs (the head walked, the rest vectorized), and vectorized from the
    start or after a few jobs walked."""
    monkeypatch.setattr(fifo, "WALK_FIRST", walk_first)
    snapshot = random_queue(seed)
    placed, blocker = reference_queue(snapshot, mode)
    result = solve(snapshot, policy="fifo", options={"mode": mode})
    assert {j.id: next(iter(j.allocation)) for j in result.jobs if j.allocation} == placed
    assert result.summary["blocked_by"] == blocker
    assert result.objective == len(placed)


@pytest.mark.parametrize("mode", ["strict", "backfill", "gavel"])
def test_walking_the_queue_gives_the_same_answer(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job-by-job walk (short queues, or after many resumptions) and the vectorized pass
    agree, reasons included."""
    monkeypatch.setattr(fifo, "WALK_FIRST", 0)
    for seed in range(10):
        snapshot = random_queue(100 + seed)
        vectorized = solve(snapshot, policy="fifo", options={"mode": mode})
        with monkeypatch.context() as patched:
            patched.setattr(fifo, "MAX_ROUNDS", 0)
            walked = solve(snapshot, policy="fifo", options={"mode": mode})
        assert [(j.allocation, j.reason) for j in walked.jobs] == [
            (j.allocation, j.reason) for j in vectorized.jobs
        ]
