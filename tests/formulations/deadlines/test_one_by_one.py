"""Chronus's own admission, one job at a time (`admission=one_by_one`), against hand-solved
cases: each rule it takes from Chronus's scheduler (whole leases from the next boundary, the first
option only, one offer at arrival, declined jobs that stay in the call's batch, σ), and what the
joint MILP gains."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.solver import solve
from tests.conformance.cases_deadlines import JOINT, LEASE, cluster, job
from tests.deadline_checks import assert_valid_answer

POLICY = "deadline_admission"
ONE_BY_ONE = {"admission": "one_by_one", "objective": "value"}


def guaranteed(result: object) -> set[str]:
    return {j.id for j in result.jobs if j.metrics.get("guaranteed")}  # type: ignore[attr-defined]


def test_one_at_a_time_the_first_job_takes_the_room_the_joint_optimum_gives_two() -> None:
    # big (8 GPUs × 1 lease, value 10) comes first and fits: admitted. p and q (4 GPUs × 2
    # leases each, value 6) then find one slot left: declined. Jointly p + q = 12 > 10.
    alone = solve(JOINT, policy=POLICY, options=ONE_BY_ONE)
    assert guaranteed(alone) == {"big"} and alone.summary["value_admitted"] == 10.0
    joint = solve(JOINT, policy=POLICY, options={"objective": "value"})
    assert guaranteed(joint) == {"p", "q"} and joint.summary["value_admitted"] == 12.0
    assert_valid_answer(alone, JOINT)


def test_the_fast_check_takes_the_latest_free_slots_before_the_best_option() -> None:
    # a (guaranteed) holds slot 0 of the node; n (1 lease, soft: slot 1 worth 10, slot 3 worth
    # 5) fits its best option in slot 1, the only free slot before it.
    data = cluster(1, job("a", 8, 1, (1, 10), guaranteed=True), job("n", 8, 1, (2, 10), (3, 5)))
    result = solve(data, policy=POLICY, options=ONE_BY_ONE)
    assert result.job("n").metrics["deadline"] == 2 * LEASE
    assert result.job("n").metrics["slots"] == "1"
    assert_valid_answer(result, data)


@pytest.mark.parametrize("seed", range(8))
def test_one_by_one_answers_are_valid_and_never_beat_the_joint_optimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(7):
        first = int(rng.integers(1, 5))
        options = [(first, 10.0)] + ([(first + 2, 5.0)] if rng.random() < 0.5 else [])
        extra = {"guaranteed": True} if i == 0 else {}
        jobs.append(
            job(f"j{i}", int(rng.choice([2, 4, 8])), int(rng.integers(1, 3)), *options, **extra)
        )
    data = cluster(1, *jobs)
    alone = solve(data, policy=POLICY, options=ONE_BY_ONE)
    joint = solve(data, policy=POLICY, options={"objective": "value", "mip_gap": 0.0})
    assert_valid_answer(alone, data)
    assert alone.summary["value_admitted"] <= joint.summary["value_admitted"]
    assert alone.job("j0").metrics["guaranteed"] or alone.summary["guarantees_broken"]


def runs_now(result: object, job_id: str) -> bool:
    return bool(result.job(job_id).metrics["runs_now"])  # type: ignore[attr-defined]


def test_a_new_job_gets_whole_leases_from_the_next_boundary() -> None:
    # 1.5 leases of work (2 leases) on an empty node at a boundary. Due by 3.6 leases: slots 1
    # and 2 hold it (σ then runs it at once, the node being free). Due by 2.6: only slot 1 lies
    # between the next boundary and the last whole lease before the deadline (the joint MILP
    # uses slot 0 and a partial third lease).
    def n(due: float) -> dict[str, object]:
        return {**job("n", 8, 1, (1, 10)), "remaining_time": 1.5 * LEASE,
                "deadlines": [{"time": due * LEASE, "value": 10}]}  # fmt: skip

    roomy = solve(cluster(1, n(3.6)), policy=POLICY, options=ONE_BY_ONE)
    assert guaranteed(roomy) == {"n"} and runs_now(roomy, "n")
    tight = cluster(1, n(2.6))
    assert guaranteed(solve(tight, policy=POLICY, options=ONE_BY_ONE)) == set()
    assert guaranteed(solve(tight, policy=POLICY, options={"objective": "value"})) == {"n"}


def test_a_job_arriving_in_the_last_quarter_lease_starts_from_the_lease_after_next() -> None:
    # 16 minutes into a 20-minute lease Chronus checks the arrival at the boundary, after that
    # lease was planned: a 1-lease job due by the end of slot 1 is declined; at 15 minutes in,
    # it gets slot 1.
    def at(minute: int) -> dict[str, object]:
        data = cluster(1, job("n", 8, 1, (2, 10), arrival_time=60 * minute))
        return {**data, "now": 60 * minute, "lease_start": 0}

    assert guaranteed(solve(at(15), policy=POLICY, options=ONE_BY_ONE)) == {"n"}
    assert guaranteed(solve(at(16), policy=POLICY, options=ONE_BY_ONE)) == set()


def test_a_soft_job_is_checked_at_its_first_option_only() -> None:
    # a (guaranteed) takes slot 1; n's first option (slot 1) is full, its second (slots 1-2,
    # worth 5) has room: Chronus declines n, the joint MILP gives it the second option.
    data = cluster(
        1,
        job("a", 8, 1, (2, 10), guaranteed=True),
        job("n", 8, 1, (2, 10), (3, 5), job_class="soft"),
    )
    assert guaranteed(solve(data, policy=POLICY, options=ONE_BY_ONE)) == {"a"}
    assert guaranteed(solve(data, policy=POLICY, options={"objective": "value"})) == {"a", "n"}


def test_a_job_that_arrived_before_this_call_is_not_offered_again() -> None:
    # The node is free; n arrived at 300 s and was declined then: at 600 s it is not admitted.
    # Arriving now, it is.
    def arrived(at: float) -> dict[str, object]:
        data = cluster(1, job("n", 8, 1, (4, 10), arrival_time=at))
        return {**data, "now": 600.0, "lease_start": 0}

    assert guaranteed(solve(arrived(300.0), policy=POLICY, options=ONE_BY_ONE)) == set()
    assert guaranteed(solve(arrived(600.0), policy=POLICY, options=ONE_BY_ONE)) == {"n"}


def test_a_declined_soft_job_declines_every_job_after_it_in_the_call() -> None:
    # s's first option needs slot 1, which a holds: s is declined and its option stays in the
    # batch, so t (slots 2-3 are free) is declined too; offered without s, t is admitted.
    a = job("a", 8, 1, (2, 10), guaranteed=True)
    s = job("s", 8, 1, (2, 10), (4, 5), job_class="soft")
    t = job("t", 8, 1, (4, 10))
    assert guaranteed(solve(cluster(1, a, s, t), policy=POLICY, options=ONE_BY_ONE)) == {"a"}
    assert guaranteed(solve(cluster(1, a, t), policy=POLICY, options=ONE_BY_ONE)) == {"a", "t"}


def test_a_declined_strict_job_keeps_room_for_the_rest_of_the_call() -> None:
    # x (2 leases, due by slot 2) cannot pack beside a (slot 1): declined, it stays in the
    # batch at the smallest deadline that packs, slots 2-3, which y (1 lease by slot 4) then
    # finds full; offered without x, y takes slot 3.
    a = job("a", 8, 1, (2, 10), guaranteed=True)
    x = job("x", 8, 2, (2, 10))
    y = job("y", 8, 1, (4, 10))
    assert guaranteed(solve(cluster(1, a, x, y), policy=POLICY, options=ONE_BY_ONE)) == {"a"}
    assert guaranteed(solve(cluster(1, a, y), policy=POLICY, options=ONE_BY_ONE)) == {"a", "y"}


def test_guaranteed_work_runs_early_unless_a_declined_slo_job_waits() -> None:
    # g (guaranteed, due by slot 3) and a best-effort job b compete for the node now: Chronus
    # runs g at once (its MILP maximizes the work in this lease while no declined SLO job
    # waits). With d waiting (declined at its arrival, still able to meet its deadline) it
    # runs g as late as it can and lends the node now.
    g = job("g", 8, 1, (3, 10), guaranteed=True)
    b = {"id": "b", "scale_factor": 8, "remaining_time": 600.0, "job_class": "best_effort"}
    d = job("d", 8, 1, (3, 10), arrival_time=-60.0)
    only_best_effort = solve(cluster(1, g, b), policy=POLICY, options=ONE_BY_ONE)
    assert runs_now(only_best_effort, "g") and not runs_now(only_best_effort, "b")
    declined = solve(cluster(1, g, b, d), policy=POLICY, options=ONE_BY_ONE)
    assert not runs_now(declined, "g") and guaranteed(declined) == {"g"}


def lending_case(now: float) -> dict[str, object]:
    # g (guaranteed, 900 s left) is not due before slot 2; d was declined at its arrival and can
    # still meet its deadline (so σ = −1 keeps g's leases late); b is best-effort. Two of the
    # three 4-GPU jobs fit the node now.
    g = {**job("g", 4, 1, (3, 10), guaranteed=True), "remaining_time": 900.0}
    d = job("d", 4, 1, (3, 10), arrival_time=-60.0)
    b = {"id": "b", "scale_factor": 4, "remaining_time": 600.0, "job_class": "best_effort"}
    return {**cluster(1, g, d, b), "now": now, "lease_start": 0}


def test_at_a_boundary_declined_and_best_effort_jobs_borrow_before_guaranteed_ones() -> None:
    # Chronus's best_func: b and d (by remaining GPU-time) before g; SRTF would lend to b, g.
    result = solve(lending_case(0.0), policy=POLICY, options=ONE_BY_ONE)
    assert [runs_now(result, j) for j in "bdg"] == [True, True, False]


def test_between_checks_guaranteed_and_declined_jobs_borrow_before_best_effort_ones() -> None:
    # Chronus's filling_jobs: hopeless jobs, then guaranteed, then declined, then best-effort.
    result = solve(lending_case(300.0), policy=POLICY, options=ONE_BY_ONE)
    assert [runs_now(result, j) for j in "bdg"] == [False, True, True]
