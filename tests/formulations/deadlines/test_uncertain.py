"""Deadline admission with remaining times known within a bound: every guarantee holds at the
longest remaining time in it (checked on the answer, recomputed from the snapshot with that
time), and the nominal answer does not."""

from __future__ import annotations

from typing import Any

import pytest

from apportion.refdata.chronus import philly_like_snapshot
from apportion.solver import InputError
from tests.deadline_checks import assert_valid_answer, slots_of
from tests.deadline_checks import solve_by_value as solve

POLICY = "deadline_admission"
EXACT = {"mip_gap": 0.0}


def bounded(seed: int) -> dict[str, Any]:
    """A small Philly-like decision; every fourth job bounds its own remaining time to 10 %."""
    snapshot = philly_like_snapshot(
        nodes=3, slo_jobs=14, best_effort_jobs=3, max_slots=24, guaranteed_share=0.0, seed=seed
    )
    for i, job in enumerate(snapshot["jobs"]):
        if i % 4 == 0:
            job["remaining_time_uncertainty"] = 0.1
    return snapshot


def longest(snapshot: dict[str, Any], default: float) -> dict[str, Any]:
    """The snapshot at the top of every job's bound: E (1 + δ)."""
    jobs = [
        {
            **job,
            "remaining_time": job["remaining_time"]
            * (1 + job.get("remaining_time_uncertainty", default)),
        }
        for job in snapshot["jobs"]
    ]
    return {**snapshot, "jobs": jobs}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_guarantee_holds_at_the_longest_remaining_time(seed: int) -> None:
    snapshot = bounded(seed)
    result = solve(snapshot, POLICY, {"uncertainty": 0.3, **EXACT})
    assert result.summary["guaranteed_jobs"] > 0
    # Leases needed and the deadline check recomputed from E (1 + δ): slots enough, in time.
    assert_valid_answer(result, longest(snapshot, 0.3))


def test_the_nominal_plan_is_short_of_leases_at_the_longest_time() -> None:
    short = 0
    for seed in (0, 1, 2):
        snapshot = bounded(seed)
        nominal = solve(snapshot, POLICY, EXACT)
        worst = longest(snapshot, 0.3)
        lease = snapshot["lease_seconds"]
        for job in worst["jobs"]:
            slots = slots_of(nominal, job["id"])
            if slots and len(slots) * lease < job["remaining_time"] - 1e-6:
                short += 1
    assert short > 0


@pytest.mark.parametrize("value", [-0.1, 11.0, "0.2"])
def test_a_bad_bound_is_refused_naming_it(value: Any) -> None:
    snapshot = bounded(0)
    snapshot["jobs"][1]["remaining_time_uncertainty"] = value
    with pytest.raises(InputError) as caught:
        solve(snapshot, POLICY)
    assert caught.value.errors[0].loc == ("snapshot", "jobs", 1, "remaining_time_uncertainty")
    with pytest.raises(InputError) as caught:
        solve(bounded(0), POLICY, {"uncertainty": value})
    assert caught.value.errors[0].loc[-1] == "uncertainty"
