"""What runs on the GPUs the guarantees leave free (FORMULATIONS §6, "lending"): shortest
remaining time first among every job that can still gain, SLO jobs past every deadline last,
and until when each lent GPU is free of planned reservations, all recomputed here from the
snapshot and the returned plan alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import slots_of
from tests.deadline_checks import solve_by_value as solve

POLICY = "deadline_admission"


def one_gpu_jobs(rng: np.random.Generator, count: int) -> list[dict[str, Any]]:
    """1-GPU jobs (so placement cannot get in the way of the order): best-effort, SLO jobs
    that can still make a deadline, SLO jobs that cannot, and 8-GPU SLO jobs for guarantees."""
    out: list[dict[str, Any]] = []
    for i in range(count):
        seconds = float(rng.integers(1, 12) * 300)
        kind = rng.random()
        if kind < 0.4:
            out.append({"id": f"be{i}", "scale_factor": 1, "remaining_time": seconds})
        elif kind < 0.6:  # its deadline is past reach: it can only end late
            deadline = {"time": seconds / 2, "value": 10.0}
            out.append({"id": f"late{i}", "remaining_time": seconds, "deadlines": [deadline]})
        else:
            deadline = {"time": seconds + float(rng.integers(1, 6)) * 600, "value": 10.0}
            out.append({"id": f"slo{i}", "remaining_time": seconds, "deadlines": [deadline]})
    # Longer than every 1-GPU job: they borrow GPUs only after all of those.
    out += [job(f"big{i}", 8, 3, (int(rng.integers(3, 7)), 10.0)) for i in range(2)]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_what_is_not_guaranteed_runs_shortest_remaining_time_first(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = cluster(2, *one_gpu_jobs(rng, 24))
    result = solve(data, policy=POLICY)
    reserved = sum(
        sum((j.placement or {}).values())
        for j in result.jobs
        if j.metrics.get("lease_use") == "reserved"
    )
    free = 16 - reserved
    # Independently: jobs that hold nothing and are not due now, those that can still meet a
    # deadline (or have none) by remaining time, then the hopeless ones; 1 GPU each.
    candidates = []
    for item in data["jobs"]:
        answer = result.job(item["id"])
        if answer.metrics.get("lease_use") == "reserved" or item.get("scale_factor", 1) != 1:
            continue
        hopeless = any(item.get("deadlines", [])) and all(
            item["remaining_time"] > d["time"] for d in item["deadlines"]
        )
        candidates.append((hopeless, item["remaining_time"], answer.metrics["guaranteed"] is True))
        candidates[-1] += (item["id"],)
    ranked = [c[-1] for c in sorted(candidates, key=lambda c: c[:3])]
    expected = set(ranked[:free])
    lent = {
        j.id
        for j in result.jobs
        if j.metrics.get("lease_use") in ("lent", "opportunistic") and j.id in set(ranked)
    }
    assert lent == expected
    assert result.summary["idle_gpus"] == max(free - len(ranked), 0)


def test_slo_jobs_past_every_deadline_run_after_best_effort_jobs() -> None:
    data = cluster(
        1,
        {"id": "late", "remaining_time": 600, "deadlines": [{"time": 300, "value": 10}]},
        *({"id": f"be{i}", "scale_factor": 1, "remaining_time": 1200} for i in range(7)),
        {"id": "be7", "scale_factor": 1, "remaining_time": 1800},
    )
    result = solve(data, policy=POLICY)
    assert result.job("late").placement is None and result.job("be7").placement is not None
    assert "not guaranteed" in (result.job("late").reason or "")


def ffd_fits(sizes: list[int], free: list[int]) -> bool:
    """First-fit decreasing onto nodes with `free` GPUs, each size whole on one node (sizes up
    to a node) or on whole empty nodes: what the lent GPUs must leave room for."""
    free = list(free)
    per_node = 8
    for size in sorted(sizes, reverse=True):
        if size >= per_node:
            empty = [n for n, f in enumerate(free) if f == per_node][: size // per_node]
            if len(empty) < size // per_node:
                return False
            for n in empty:
                free[n] = 0
            continue
        fits = [n for n, f in enumerate(free) if f >= size]
        if not fits:
            return False
        node = min(fits, key=lambda n: free[n])
        free[node] -= size
    return True


def test_lent_gpus_are_free_of_reservations_until_the_time_the_answer_gives() -> None:
    # Three nodes. g1 (16 GPUs) is due in slots 1–2 and g2 (8) in slot 3, latest first by σ;
    # six best-effort jobs borrow GPUs now. Each is lent until the first boundary where the
    # reservations would no longer fit with it (and those lent before it) in place.
    data = cluster(
        3,
        job("g1", 16, 2, (3, 10)),
        job("g2", 8, 1, (4, 10)),
        *({"id": f"be{i}", "scale_factor": 4, "remaining_time": 600} for i in range(6)),
    )
    result = solve(data, policy=POLICY)
    reserved: dict[int, list[int]] = {}
    for item in data["jobs"]:
        for t in slots_of(result, item["id"]):
            reserved.setdefault(t, []).append(
                16 if item["scale_factor"] > 8 else item["scale_factor"]
            )
    borrowers = [j for j in result.jobs if j.metrics.get("lease_use") == "lent"]
    assert len(borrowers) == 6
    kept: list[tuple[dict[str, int], int]] = []  # earlier borrowers: where, and until which slot

    def free_in(t: int, spot: dict[str, int]) -> list[int]:
        free = [8, 8, 8]
        for held, stop in [*kept, (spot, t + 1)]:
            if t < stop:
                for node, gpus in held.items():
                    free[int(node[1:])] -= gpus
        return free

    for borrower in sorted(borrowers, key=lambda j: j.id):  # equal remaining: snapshot order
        until = borrower.metrics["lent_until"]
        stop = 99 if until is None else round(until / LEASE)
        spot = borrower.placement or {}
        for t in range(1, min(stop, 6)):
            assert ffd_fits(reserved.get(t, []), free_in(t, spot)), (borrower.id, t)
        if until is not None:
            assert not ffd_fits(reserved.get(stop, []), free_in(stop, spot)), borrower.id
        kept.append((spot, stop))
    assert any(j.metrics["lent_until"] is not None for j in borrowers)
