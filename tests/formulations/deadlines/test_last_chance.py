"""Last chance (FORMULATIONS §6, "lending"): an SLO job the lease price declines, that must start
in this lease to meet its deadline, is lent GPUs ahead of the other SLO jobs when every
deadline still fits in earliest-deadline order; when they do not, shortest remaining time first
stands. Hand-solved cases."""

from __future__ import annotations

from typing import Any

from apportion.solver import solve
from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import assert_valid_answer

POLICY = "deadline_admission"


def small_slo_jobs(count: int) -> list[dict[str, Any]]:
    # 1 GPU, one lease, due in 6 leases: each guarantee costs little and is packed late.
    return [job(f"s{i}", 1, 1, (6, 10)) for i in range(count)]


def lent_now(result: Any) -> set[str]:
    return {j.id for j in result.jobs if j.metrics.get("lease_use") in ("lent", "opportunistic")}


def test_a_declined_job_at_its_last_chance_runs_before_shorter_slo_jobs() -> None:
    # One node. long: 8 GPUs, 3 leases, due at 3.5 leases: only slots 0–2 meet it, so it must
    # start in this lease (slack 600 s < the 1,200 s left). 16 GPUs asked of 8 (ρ = 1): its
    # guarantee would cost 0.05 · 8 · 3 = 1.2 of its value, so it is declined. The eight 1-GPU
    # jobs are guaranteed in their last slot (5); shortest remaining time first would lend them
    # the node now (1,200 s < 3,600 s) and long would miss. Earliest deadline first: long alone
    # needs 8 · 3,600 GPU-seconds by 4,200 s, of 8 · 4,200 free: it goes first and can meet it.
    long = {**job("long", 8, 3, (4, 10)), "deadlines": [{"time": 3.5 * LEASE, "value": 10}]}
    data = cluster(1, long, *small_slo_jobs(8))
    result = solve(data, policy=POLICY)
    assert not result.job("long").metrics["guaranteed"]
    assert all(result.job(f"s{i}").metrics["guaranteed"] for i in range(8))
    assert lent_now(result) == {"long"}
    assert result.job("long").placement == {"n0": 8}
    assert_valid_answer(result, data)


def test_when_the_deadlines_do_not_fit_shortest_remaining_time_first_stands() -> None:
    # Two such jobs (3,600 s and 3,500 s of 8 GPUs, due at 4,200 s and 4,100 s): by 4,100 s
    # the first due needs 28,000 GPU-seconds of 32,800 free, but both by 4,200 s need 56,800
    # of 33,600. The cluster is over-committed: the 1-GPU jobs go first (shortest first), as
    # Moore and Hodgson's rule gives up the longest jobs.
    first = {**job("a", 8, 3, (4, 10)), "deadlines": [{"time": 3.5 * LEASE, "value": 10}]}
    second = {
        **job("b", 8, 3, (4, 10)),
        "remaining_time": 3500.0,
        "deadlines": [{"time": 3.5 * LEASE - 100, "value": 10}],
    }
    data = cluster(1, first, second, *small_slo_jobs(8))
    result = solve(data, policy=POLICY)
    assert not result.job("a").metrics["guaranteed"] and not result.job("b").metrics["guaranteed"]
    assert lent_now(result) == {f"s{i}" for i in range(8)}


def test_best_effort_jobs_keep_their_places_before_a_job_at_its_last_chance() -> None:
    # The same long job behind eight 1-GPU best-effort jobs of 1,200 s: only SLO jobs are
    # reordered, so the best-effort jobs (shorter) are lent the node and long waits.
    long = {**job("long", 8, 3, (4, 10)), "deadlines": [{"time": 3.5 * LEASE, "value": 10}]}
    crowd = [{"id": f"be{i}", "scale_factor": 1, "remaining_time": 1200} for i in range(8)]
    result = solve(cluster(1, long, *crowd), policy=POLICY)
    assert lent_now(result) == {f"be{i}" for i in range(8)}


def ran_up_to_now(job_id: str, remaining: float, due: float) -> dict[str, Any]:
    # 8 GPUs, a 120-s restart, on n0 up to this call at a boundary (its hold ends now).
    return {
        "id": job_id,
        "scale_factor": 8,
        "remaining_time": remaining,
        "overhead_seconds": 120.0,
        "placement": {"n0": 8},
        "deadlines": [{"time": due, "value": 10}],
    }


def test_a_job_whose_slack_is_under_its_restart_runs_on_where_it_ran() -> None:
    # One node, a call at a boundary. late: 3,600 s left, due at 3,660 s. Running on without a
    # break it ends at 3,600 s and meets it (slack 60 s); stopped or moved, it pays the 120-s
    # restart and ends at 3,720 s or later, a miss. The price declines it (16 GPUs asked of 8,
    # ρ = 1: ⌈3,960 / 1,080⌉ = 4 leases × 8 GPUs × 0.05 = 1.6 of its value). Alone among the
    # SLO jobs without a guarantee, its 28,800 GPU-seconds fit the 29,280 free by 3,660 s. The
    # best-effort job (1,200 s) is shorter, so shortest remaining time first would lend it n0,
    # and counting late's restart as if it held nothing (slack −60 s) calls late hopeless.
    late = ran_up_to_now("late", 3600.0, 3660.0)
    short = {"id": "be", "scale_factor": 8, "remaining_time": 1200.0}
    data = cluster(1, late, short)
    result = solve(data, policy=POLICY)
    assert not result.job("late").metrics["guaranteed"]
    assert lent_now(result) == {"late"}
    assert result.job("late").placement == {"n0": 8}
    assert_valid_answer(result, data)


def test_a_job_running_on_gives_way_to_a_guarantee_due_now() -> None:
    # The same late job beside a guaranteed job due in this lease (8 GPUs, 1,000 s, due at
    # 1,200 s): the node is the guarantee's; late can meet nothing after a stop, but a
    # guarantee is a promise.
    late = ran_up_to_now("late", 3600.0, 3660.0)
    due = {**job("g", 8, 1, (1, 10), guaranteed=True), "remaining_time": 1000.0}
    data = cluster(1, late, due)
    result = solve(data, policy=POLICY)
    assert result.job("g").metrics["guaranteed"] and result.job("g").placement == {"n0": 8}
    assert not result.job("late").placement
    assert_valid_answer(result, data)
