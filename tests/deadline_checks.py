"""Assertions on a deadline-admission result, recomputed from the snapshot alone."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from apportion.solver import SolveResult


def ru(gpus: int, per_node: int) -> int:
    """Round-up, written independently of the policy: the smallest power of two ≥ g that divides
    the node size (else the node), or whole nodes."""
    if gpus > per_node:
        return per_node * math.ceil(gpus / per_node)
    size = 1
    while size < gpus and per_node % (size * 2) == 0:
        size *= 2
    return size if size >= gpus else per_node


def leases_needed(job: dict[str, Any], lease: float) -> int:
    return math.ceil(job["remaining_time"] / lease - 1e-9)


def slots_of(result: SolveResult, job_id: str) -> list[int]:
    text = result.job(job_id).metrics["slots"]
    return [int(t) for t in text.split(",")] if text else []


def assert_valid_answer(result: SolveResult, snapshot: dict[str, Any]) -> None:
    """Guaranteed jobs: a real option, exactly the leases needed, all before that deadline; per
    slot reserved GPUs within the cluster; placements within nodes, each job placed once, with
    the GPUs it asks for, guaranteed ones consolidated; earlier guarantees kept or reported."""
    per_node = snapshot["nodes"][0]["gpus"]
    capacity = per_node * len(snapshot["nodes"])
    lease, now = snapshot["lease_seconds"], snapshot.get("now", 0.0)
    reserved: dict[int, int] = defaultdict(int)
    value = 0.0
    broken = set(result.summary["guarantees_broken"])
    for job in snapshot["jobs"]:
        metrics = result.job(job["id"]).metrics
        if job.get("guaranteed") and job["id"] not in broken:
            assert metrics["guaranteed"], f"{job['id']} lost its guarantee silently"
        if not metrics.get("guaranteed"):
            assert not slots_of(result, job["id"])
            continue
        option = next(o for o in job["deadlines"] if o["time"] == metrics["deadline"])
        value += option["value"]
        slots = slots_of(result, job["id"])
        assert len(slots) == len(set(slots)) == leases_needed(job, lease), job["id"]
        assert all(t < math.floor((option["time"] - now) / lease + 1e-9) for t in slots)
        for t in slots:
            reserved[t] += ru(job.get("scale_factor", 1), per_node)
    assert all(gpus <= capacity for gpus in reserved.values()), reserved
    assert value == result.objective
    assert_valid_placements(result, snapshot, per_node)


def assert_valid_placements(result: SolveResult, snapshot: dict[str, Any], per_node: int) -> None:
    used: dict[str, int] = defaultdict(int)
    node_ids = {n["id"] for n in snapshot["nodes"]}
    for job in snapshot["jobs"]:
        placed = result.job(job["id"]).placement
        metrics = result.job(job["id"]).metrics
        if placed is None:
            assert not metrics["runs_now"]
            continue
        gpus = job.get("scale_factor", 1)
        assert sum(placed.values()) == gpus and set(placed) <= node_ids
        if metrics["lease_use"] == "reserved":
            assert len(placed) == max(1, math.ceil(gpus / per_node)), (job["id"], placed)
        for node, n in placed.items():
            used[node] += n
    assert all(n <= per_node for n in used.values()), used
    idle = per_node * len(node_ids) - sum(used.values())
    assert result.summary["idle_gpus"] == idle
