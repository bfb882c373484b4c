"""Chronus's own admission, one job at a time (`admission=one_by_one`), against hand-solved
cases: the fast check, the binary search over deadlines, and what the joint MILP gains."""

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
