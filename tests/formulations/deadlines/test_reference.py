"""Deadline admission against the independent brute force of `reference` on tiny random
snapshots, for both exact objectives, at gap 0: the optimum (guarantees kept, then the
objective), the status that says which, and a plan that keeps every rule.

The generator makes the edge cases on purpose: identical jobs (guaranteed and not), guaranteed
jobs with and without a promised deadline, jobs larger than the cluster, best-effort jobs (they
set the pressure), empty job lists, equal values and shared deadlines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, note, settings
from hypothesis import strategies as st

from apportion.solver import solve
from tests.formulations.deadlines.reference import (
    TOLERANCE,
    brute_force,
    keepable_alone,
    read_answer,
)

LEASE = 100
#: Two identical guaranteed jobs that must take different options (the solver once called the
#: plan that gives both the same one optimal).
IDENTICAL = json.loads(
    (Path(__file__).parent / "data" / "deadline_identical_guaranteed.json").read_text()
)
#: Deadlines fall on and between lease boundaries, so the last-lease rule is exercised.
TIMES = st.integers(1, 18).map(lambda k: 25 * k)


@st.composite
def jobs(draw: st.DrawFn, job_id: str, capacity: int) -> dict[str, Any]:
    gpus = draw(st.integers(1, capacity + 2))
    job: dict[str, Any] = {
        "id": job_id,
        "scale_factor": gpus,
        "remaining_time": draw(st.sampled_from([50, 100, 150, 200, 250])),
    }
    if draw(st.integers(0, 5)) == 0:
        return job  # best-effort
    times = sorted(draw(st.sets(TIMES, min_size=1, max_size=3)))
    values = draw(st.lists(st.sampled_from([1, 2, 5, 8, 10]), min_size=len(times), max_size=3))
    job["deadlines"] = [{"time": t, "value": v} for t, v in zip(times, values, strict=False)]
    if draw(st.integers(0, 2)) == 0:
        job["guaranteed"] = True
        if draw(st.booleans()):
            job["guaranteed_deadline"] = draw(st.sampled_from(times))
    return job


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, Any]:
    per_node = draw(st.sampled_from([2, 4]))
    nodes = draw(st.integers(1, 2))
    listed: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 5))):
        if listed and draw(st.integers(0, 3)) == 0:
            listed.append({**draw(st.sampled_from(listed)), "id": f"j{i}"})  # an identical job
        else:
            listed.append(draw(jobs(f"j{i}", per_node * nodes)))
    return {
        "gpu_types": [{"name": "v100", "count": per_node * nodes}],
        "nodes": [{"id": f"n{n}", "gpus": per_node} for n in range(nodes)],
        "lease_seconds": LEASE,
        "now": 0,
        "jobs": listed,
    }


@pytest.mark.parametrize("objective", ["value", "satisfaction"])
@settings(max_examples=150, deadline=None)
@given(snapshot=snapshots())
@example(snapshot=IDENTICAL["snapshot"])
@example(snapshot={**IDENTICAL["snapshot"], "jobs": []})
def test_admission_reaches_the_brute_force_optimum(
    objective: str, snapshot: dict[str, Any]
) -> None:
    best = brute_force(snapshot, objective)
    result = solve(
        snapshot, policy="deadline_admission", options={"objective": objective, "mip_gap": 0.0}
    )
    answer = read_answer(result, snapshot, objective)
    note(json.dumps(snapshot))
    assert result.status == ("optimal" if best.kept == keepable_alone(snapshot) else "fallback")
    assert answer.kept == best.kept
    assert answer.objective == pytest.approx(best.objective, rel=TOLERANCE, abs=TOLERANCE)
    assert result.objective == pytest.approx(best.objective, rel=TOLERANCE, abs=TOLERANCE)
    capacity = snapshot["gpu_types"][0]["count"]
    for job in snapshot["jobs"]:
        if job["scale_factor"] > capacity:
            reason = result.job(job["id"]).reason or ""
            assert "larger than the cluster" in reason, reason
