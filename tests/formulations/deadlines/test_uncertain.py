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


def test_a_bound_on_throughput_bounds_a_remaining_time_derived_from_steps() -> None:
    """E = R / T with T known within 20 %: at most R / (0.8 T). a needs 1 lease at T and 2 at
    0.8 T, so its one-slot deadline can only be guaranteed without the bound."""
    lease = 1200
    snapshot = {
        "gpu_types": [{"name": "v100", "count": 8}],
        "nodes": [{"id": "n0", "gpus": 8}],
        "lease_seconds": lease,
        "now": 0,
        "jobs": [
            {
                "id": "a",
                "scale_factor": 8,
                "steps_remaining": 1_000.0,
                "throughput": {"v100": 1_000.0 / lease},
                "deadlines": [{"time": lease, "value": 1.0}],
            },
            {
                "id": "b",
                "scale_factor": 8,
                "steps_remaining": 500.0,
                "throughput": {"v100": 1_000.0 / lease},
                "throughput_uncertainty": {"v100": 0.2},
                "deadlines": [{"time": 2 * lease, "value": 1.0}],
            },
        ],
    }
    assert solve(snapshot, POLICY, EXACT).job("a").metrics["guaranteed"]
    bounded_a = {**snapshot["jobs"][0], "throughput_uncertainty": {"v100": 0.2}}
    tight = {**snapshot, "jobs": [bounded_a, snapshot["jobs"][1]]}
    result = solve(tight, POLICY, EXACT)
    assert not result.job("a").metrics["guaranteed"]
    # b: 600 s at T, at most 750 s within the bound: one lease, guaranteed, and recomputed from
    # the longest remaining time every guarantee holds.
    assert result.job("b").metrics["guaranteed"]
    worst = [
        {**{k: v for k, v in job.items() if k != "steps_remaining"}, "remaining_time": t}
        for job, t in zip(tight["jobs"], (lease / 0.8, 0.5 * lease / 0.8), strict=True)
    ]
    assert_valid_answer(result, {**tight, "jobs": worst})
