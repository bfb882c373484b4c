"""The earliest deadline a rejected job could be guaranteed now, against brute force: the
smallest deadline at which a re-solve, with every admitted job kept at its option and the other
rejected jobs left out, admits it; and `capacity` against `lower_value` by a re-solve with the
earlier guarantees alone."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.formulations.deadlines.earliest import earliest
from apportion.formulations.deadlines.lease_plan import greedy_plan
from apportion.formulations.deadlines.problem import lease_problem
from apportion.solver import parse_snapshot, solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext, TimeBudget
from apportion.solver.explain import Reason
from apportion.solver.options import SolveOptions
from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import assert_valid_answer

POLICY = "deadline_admission"
HORIZON = 8


def random_instance(rng: np.random.Generator) -> dict[str, Any]:
    jobs = []
    for j in range(5):
        gpus = int(rng.choice([2, 4, 6, 8]))
        first = int(rng.integers(1, 4))
        options = [(first, float(rng.integers(1, 10)))]
        if rng.random() < 0.4:
            options.append((first + 1, float(rng.integers(1, 10))))
        extra = {"guaranteed": True} if j == 0 else {}
        jobs.append(job(f"j{j}", gpus, int(rng.integers(1, 3)), *options, **extra))
    return cluster(1, *jobs)


def admitted_at(
    data: dict[str, Any], result: Any, job_id: str, slots: int, earlier_only: bool = False
) -> bool:
    """Re-solve with job_id due in `slots` leases (value 1), every admitted job (or only those
    guaranteed before, `earlier_only`) guaranteed at the option it got, the rest left out."""
    jobs = []
    for item in data["jobs"]:
        metrics = result.job(item["id"]).metrics
        if item["id"] == job_id:
            deadline = [{"time": slots * LEASE, "value": 1.0}]
            jobs.append({**item, "deadlines": deadline, "guaranteed": False})
        elif metrics["guaranteed"] and (item.get("guaranteed") or not earlier_only):
            option = item["deadlines"][metrics["option"]]
            jobs.append({**item, "deadlines": [option], "guaranteed": True})
    again = solve(
        cluster(1, *jobs), policy=POLICY, options={"mip_gap": 0.0, "horizon_slots": HORIZON}
    )
    assert not again.summary["guarantees_broken"]
    assert_valid_answer(again, cluster(1, *jobs))
    return bool(again.job(job_id).metrics["guaranteed"])


@pytest.mark.parametrize("seed", range(6))
def test_the_earliest_deadline_is_the_smallest_a_re_solve_admits(seed: int) -> None:
    data = random_instance(np.random.default_rng(seed))
    options = {"mip_gap": 0.0, "horizon_slots": HORIZON}
    result = solve(data, policy=POLICY, explain=True, options=options)
    assert result.explanation is not None
    checked = 0
    for explained in result.explanation.jobs:
        if result.job(explained.id).metrics["guaranteed"]:
            continue
        assert explained.detail["earliest_computed"]
        brute = next(
            (s for s in range(1, HORIZON + 1) if admitted_at(data, result, explained.id, s)), None
        )
        expected = None if brute is None else brute * LEASE
        assert explained.detail["earliest_deadline"] == expected, explained.id
        if explained.code in (Reason.CAPACITY, Reason.LOWER_VALUE):
            latest = max(o["time"] for o in job_of(data, explained.id)["deadlines"]) // LEASE
            room = admitted_at(data, result, explained.id, latest, earlier_only=True)
            assert (explained.code == Reason.LOWER_VALUE) == room, explained.id
        checked += 1
    assert checked > 0


def job_of(data: dict[str, Any], job_id: str) -> dict[str, Any]:
    return next(item for item in data["jobs"] if item["id"] == job_id)


def test_without_time_left_the_search_says_not_computed_and_what_is_known() -> None:
    # g holds slots 0–1, n takes slot 2: c's deadline could be 4 leases (room after n), but
    # whether 2 or 3 would do needs a MILP, and no time is left for one.
    data = cluster(
        1,
        job("g", 8, 2, (2, 10), guaranteed=True),
        job("n", 8, 1, (3, 9)),
        job("c", 8, 1, (2, 5)),
    )
    snapshot = parse_snapshot(data)
    problem = lease_problem(
        snapshot, 0.0, HORIZON, ClusterArrays.from_snapshot(snapshot).throughput
    )
    plan, lost = greedy_plan(problem, np.arange(2))
    assert lost.size == 0 and plan.admitted.tolist() == [True, True, False]
    spent = SolveContext(SolveOptions(), budget=TimeBudget(0.0))
    found = earliest(problem, plan, 2, HORIZON, spent)
    # Proven without a model: alone it needs 1 slot, and the plan leaves slot 3 free for it.
    assert not found.computed and found.slots is None
    assert (found.lower, found.upper) == (1, 4)
    with_time = earliest(problem, plan, 2, HORIZON, SolveContext(SolveOptions()))
    assert with_time.computed and with_time.slots == 4
