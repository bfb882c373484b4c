"""The lease grid (FORMULATIONS §6): calls between lease boundaries, jobs holding GPUs, per-job
overhead and the safety margin; hand-solved cases, and random calls enacted exactly."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from apportion.solver import SolveResult, Status, solve
from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import assert_valid_placements, slots_of

POLICY = "deadline_admission"


def mid_lease(nodes: int, now: float, *jobs: dict[str, Any]) -> dict[str, Any]:
    """A call at `now` inside the lease that started at 0."""
    return {**cluster(nodes, *jobs), "now": now, "lease_start": 0.0}


def slo(
    job_id: str, gpus: int, seconds: float, *options: tuple[float, float], **extra: Any
) -> dict[str, Any]:
    """`options` as (deadline in seconds, value)."""
    return {
        "id": job_id,
        "scale_factor": gpus,
        "remaining_time": seconds,
        "deadlines": [{"time": t, "value": v} for t, v in options],
        **extra,
    }


def test_a_call_between_boundaries_plans_on_the_callers_grid() -> None:
    # 2,400 s of work, deadline 3,000, asked at 600 in the lease [0, 1,200). On a grid shifted to
    # now it fits ([600, 1,800) and [1,800, 3,000)), but the caller's leases end at 1,200 and
    # 2,400: 600 s now, 1,200 s next, 600 s left after 2,400. Slot 0 is not worth a lease to it,
    # and 2 leases from slot 1 end at 3,600.
    late = slo("a", 8, 2400, (3000, 10))
    assert solve({**cluster(1, late), "now": 600}, policy=POLICY).job("a").metrics["guaranteed"]
    result = solve(mid_lease(1, 600, late), policy=POLICY)
    assert not result.job("a").metrics["guaranteed"]
    assert "from slot 1" in (result.job("a").reason or "")
    # 1,800 s: 600 s now and a full lease after: done at 2,400 on the caller's grid.
    fits = solve(mid_lease(1, 600, slo("a", 8, 1800, (2400, 10))), policy=POLICY)
    assert fits.job("a").metrics["guaranteed"] and slots_of(fits, "a") == [0, 1]
    assert fits.job("a").placement == {"n0": 8}


def test_a_holder_keeps_its_gpus_and_the_others_plan_around_it() -> None:
    # h holds n0 until 1,200 and needs 1,800 s: 600 s in its hold, one lease after. a and b both
    # need a whole node now; only n1 is free, a is worth more.
    held = {"placement": {"n0": 8}, "held_until": 1200.0, "guaranteed": True}
    data = mid_lease(
        2,
        600,
        slo("h", 8, 1800, (2400, 10), **held),
        slo("a", 8, 600, (1200, 5)),
        slo("b", 8, 600, (1200, 3)),
    )
    result = solve(data, policy=POLICY)
    assert result.status is Status.OPTIMAL and result.objective == 15.0
    h = result.job("h")
    assert h.placement == {"n0": 8} and h.metrics["lease_use"] == "held"
    assert h.metrics["leases_needed"] == 1 and slots_of(result, "h") == [1]
    assert result.job("a").placement == {"n1": 8}
    assert not result.job("b").metrics["guaranteed"] and result.job("b").placement is None
    assert result.summary["held_gpus"] == 8 and result.summary["lease_start"] == 0.0


def test_what_holders_leave_free_must_take_a_reservation_whole() -> None:
    # x and y hold half of each node: 8 GPUs are free, but no node has 8. z (8 GPUs, due now)
    # cannot be guaranteed; q (4 GPUs) can, on one node.
    hold = {"remaining_time": 7200, "held_until": 1200.0}
    data = mid_lease(
        2,
        0,
        {"id": "x", "scale_factor": 4, "placement": {"n0": 4}, **hold},
        {"id": "y", "scale_factor": 4, "placement": {"n1": 4}, **hold},
        slo("z", 8, 1200, (1200, 10)),
        slo("q", 4, 1200, (1200, 1)),
    )
    result = solve(data, policy=POLICY)
    assert result.objective == 1.0
    assert not result.job("z").metrics["guaranteed"]
    assert result.job("q").metrics["lease_use"] == "reserved"
    assert len(result.job("q").placement or {}) == 1
    assert_valid_placements(result, data, 8)


def test_a_holder_that_ends_in_its_hold_meets_the_deadlines_after_its_end() -> None:
    held = {"placement": {"n0": 8}, "held_until": 1200.0}
    result = solve(mid_lease(1, 600, slo("h", 8, 300, (800, 10), (1000, 5), **held)), policy=POLICY)
    h = result.job("h")
    assert h.metrics["guaranteed"] and h.metrics["deadline"] == 1000 and result.objective == 5.0
    assert h.metrics["leases_needed"] == 0 and h.placement == {"n0": 8}
    alone = solve(mid_lease(1, 600, slo("h", 8, 300, (800, 10), **held)), policy=POLICY)
    assert "ends at 900 in the lease it holds" in (alone.job("h").reason or "")


@pytest.mark.parametrize(
    ("extra", "options", "leases"),
    [
        ({"overhead_seconds": 300}, {}, 3),  # 900 s of work per lease: ⌈2,400/900⌉
        ({}, {"overhead_seconds": 300}, 3),
        ({"overhead_seconds": 0}, {"overhead_seconds": 300}, 2),  # the job's own wins
        ({}, {"safety_margin": 0.1}, 3),  # 2,640 s
    ],
)
def test_overhead_per_job_and_the_safety_margin_add_leases(
    extra: dict[str, Any], options: dict[str, Any], leases: int
) -> None:
    data = cluster(1, job("a", 8, 2, (2, 10), **extra))
    result = solve(data, policy=POLICY, options=options)
    assert result.job("a").metrics["leases_needed"] == leases
    assert result.job("a").metrics["guaranteed"] == (leases == 2)


# ---- random calls, enacted exactly --------------------------------------------------------


def random_jobs(rng: np.random.Generator, count: int, nodes: int) -> list[dict[str, Any]]:
    out = []
    for j in range(count):
        gpus = int(rng.choice([1, 2, 4, 8, 16 if nodes > 2 else 8]))
        seconds = float(rng.integers(1, 9) * 300)
        if rng.random() < 0.25:
            out.append({"id": f"be{j}", "scale_factor": gpus, "remaining_time": seconds})
            continue
        slack = float(rng.integers(0, 4) * 1200 + rng.integers(0, 4) * 300)
        first = seconds + slack
        options = [(first, 10.0)]
        if rng.random() < 0.5:
            options.append((first + 2400, 4.0))
        out.append(slo(f"j{j}", gpus, seconds, *options))
    return out


def enact(
    data: dict[str, Any], result: SolveResult, until: float, finished: dict[str, float]
) -> dict[str, Any]:
    """The caller does what the answer says until `until`: jobs that run now hold their GPUs to
    the end of the current lease (or their end, recorded in `finished`); guarantees carry over;
    holds end at the lease boundary."""
    now, start = data["now"], data["lease_start"]
    end = start + LEASE
    jobs = []
    for item in data["jobs"]:
        answer = result.job(item["id"])
        item = {k: v for k, v in item.items() if k not in ("placement", "held_until")}
        if answer.metrics.get("guaranteed") is not None:
            item["guaranteed"] = bool(answer.metrics["guaranteed"])
        if answer.metrics["runs_now"]:
            if item["remaining_time"] <= until - now:
                finished[item["id"]] = now + item["remaining_time"]
                continue
            item["remaining_time"] -= until - now
            if until < end:
                item.update(placement=answer.placement, held_until=end)
        jobs.append(item)
    return {**data, "jobs": jobs, "now": until, "lease_start": start if until < end else end}


@pytest.mark.parametrize("seed", range(8))
def test_guarantees_hold_through_calls_every_few_minutes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(2, 4))
    data = mid_lease(nodes, 0.0, *random_jobs(rng, 14, nodes))
    promised: dict[str, float] = {}
    finished: dict[str, float] = {}
    for step in range(8):  # calls every 300 s: two leases
        result = solve(data, policy=POLICY)
        assert result.status is not Status.FALLBACK and not result.summary["guarantees_broken"]
        assert_valid_placements(result, data, 8)
        for item in data["jobs"]:
            answer = result.job(item["id"])
            if "placement" in item:
                assert answer.placement == item["placement"], "a holder was moved"
            if answer.metrics.get("guaranteed"):
                promised[item["id"]] = answer.metrics["deadline"]
        data = enact(data, result, 300.0 * (step + 1), finished)
    assert promised, "the instance guarantees something"
    late = [j for j, t in finished.items() if j in promised and t > promised[j] + 1e-6]
    assert late == []
    # Two leases on (a boundary), every job still guaranteed can still meet its deadline.
    for item in data["jobs"]:
        if item.get("guaranteed"):
            need = math.ceil(item["remaining_time"] / LEASE - 1e-9)
            assert data["now"] + need * LEASE <= promised[item["id"]] + 1e-6
