"""Deadline admission against the independent brute force of `reference` on tiny random
snapshots, for both exact objectives, at gap 0: the optimum (guarantees kept, then the
objective), the status that says which, and a plan that keeps every rule.

The generator makes the edge cases on purpose: identical jobs (guaranteed and not), guaranteed
jobs with and without a promised deadline, jobs larger than the cluster, jobs that hold GPUs
(ending within their hold or not), best-effort jobs (they set the pressure), per-job and
per-request overhead, a safety margin, empty job lists, equal values and shared deadlines."""

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
#: Deadlines fall on and between lease boundaries, so the last-lease rule is exercised.
TIMES = st.integers(1, 18).map(lambda k: 25 * k)
#: Two identical guaranteed jobs that must take different options (the solver once called the
#: plan that gives both the same one optimal).
IDENTICAL = json.loads(
    (Path(__file__).parent / "data" / "deadline_identical_guaranteed.json").read_text()
)


@st.composite
def jobs(draw: st.DrawFn, job_id: str, per_node: int, nodes: int) -> dict[str, Any]:
    wide = draw(st.integers(0, 7)) == 0  # larger than the cluster
    gpus = draw(st.integers(1, per_node * nodes) if not wide else st.integers(1, 2))
    gpus += per_node * nodes if wide else 0
    job: dict[str, Any] = {
        "id": job_id,
        "scale_factor": gpus,
        "remaining_time": draw(st.sampled_from([50, 100, 150, 200, 250])),
    }
    if gpus <= per_node and draw(st.integers(0, 3)) == 0:
        node = draw(st.integers(0, nodes - 1))
        job["placement"] = {f"n{node}": gpus}
        job["held_until"] = LEASE * draw(st.integers(1, 2))
    if draw(st.integers(0, 4)) == 0:
        job["overhead_seconds"] = draw(st.sampled_from([0, 20, 50]))
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


def holds_fit(listed: list[dict[str, Any]], per_node: int) -> bool:
    held: dict[str, int] = {}
    for job in listed:
        for node, gpus in job.get("placement", {}).items():
            held[node] = held.get(node, 0) + gpus
    return all(gpus <= per_node for gpus in held.values())


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, Any]:
    per_node = draw(st.sampled_from([2, 4]))
    nodes = draw(st.integers(1, 2))
    listed: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 5))):
        if listed and draw(st.integers(0, 3)) == 0:
            twin = {k: v for k, v in draw(st.sampled_from(listed)).items()}
            twin.pop("placement", None), twin.pop("held_until", None)
            listed.append({**twin, "id": f"j{i}"})  # an identical job
            continue
        job = draw(jobs(f"j{i}", per_node, nodes))
        if not holds_fit([*listed, job], per_node):
            job.pop("placement"), job.pop("held_until")
        listed.append(job)
    return {
        "gpu_types": [{"name": "v100", "count": per_node * nodes}],
        "nodes": [{"id": f"n{n}", "gpus": per_node} for n in range(nodes)],
        "lease_seconds": LEASE,
        "lease_start": 0,
        "now": draw(st.sampled_from([0, 0, 25, 50, 75])),  # at the boundary or mid-lease
        "jobs": listed,
    }


def request(margin: float, objective: str) -> dict[str, Any]:
    return {"objective": objective, "mip_gap": 0.0, "safety_margin": margin}


@pytest.mark.parametrize("objective", ["value", "satisfaction"])
@settings(max_examples=120, deadline=None)
@given(snapshot=snapshots(), margin=st.sampled_from([0.0, 0.0, 0.25, 0.5]))
@example(snapshot=IDENTICAL["snapshot"], margin=0.0)
@example(snapshot={**IDENTICAL["snapshot"], "jobs": []}, margin=0.0)
def test_admission_reaches_the_brute_force_optimum(
    objective: str, snapshot: dict[str, Any], margin: float
) -> None:
    note(json.dumps(snapshot))
    options = request(margin, objective)
    best = brute_force(snapshot, options)
    result = solve(snapshot, policy="deadline_admission", options=options)
    answer = read_answer(result, snapshot, options)
    traded = best.kept < keepable_alone(snapshot, options)
    assert result.status == ("fallback" if traded else "optimal")
    assert answer.kept == best.kept
    assert answer.objective == pytest.approx(best.objective, rel=TOLERANCE, abs=TOLERANCE)
    assert result.objective == pytest.approx(best.objective, rel=TOLERANCE, abs=TOLERANCE)
    capacity = snapshot["gpu_types"][0]["count"]
    for job in snapshot["jobs"]:
        if job["scale_factor"] > capacity:
            reason = result.job(job["id"]).reason or ""
            assert "larger than the cluster" in reason, reason
