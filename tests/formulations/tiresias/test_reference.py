"""The Tiresias policies against their independent reference (`reference`,
`reference_traffic`) on tiny random snapshots, with the cases that broke them before made on
purpose: running jobs that may be preempted, identical jobs, jobs that fit nowhere or run
nowhere, empty job lists and queues, ties in start, arrival and attained service, preemption
caps of 0 and 1, fractional preemption costs, promotion, two GPU types, placements whose
nodes are listed out of order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from apportion import solve
from tests.formulations.tiresias.reference import answer_score, best_admission
from tests.formulations.tiresias.reference_traffic import check_network
from tests.formulations.tiresias.valid import check_schedule

REPEATABLE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)
TENSORS = [None, [3.0, 1.0], [1.0, 1.0, 1.0], [5.0, 1.0, 2.0, 1.0], [2.0, 2.0, 2.0, 2.0]]


@st.composite
def snapshots(draw: st.DrawFn, traffic: bool = False) -> dict[str, Any]:
    types = draw(st.sampled_from([["a"], ["a"], ["a", "b"]]))
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    kinds: list[str] = [draw(st.sampled_from(types)) for _ in sizes]
    nodes: list[dict[str, Any]] = [
        {"id": f"n{i}", "gpus": s, "gpu_type": k}
        for i, (s, k) in enumerate(zip(sizes, kinds, strict=True))
    ]
    present = sorted(set(kinds))
    free = list(sizes)
    jobs: list[dict[str, Any]] = []
    roles = ["running"] * draw(st.integers(0, 3)) + ["waiting"] * draw(st.integers(0, 3))
    roles += ["unfit"] * draw(st.integers(0, 2))
    for i, role in enumerate(draw(st.permutations(roles))[:6]):
        if jobs and draw(st.integers(0, 4)) == 0:  # an identical job, but for its id
            twin = dict(draw(st.sampled_from(jobs)))
            twin.pop("placement", None)
            jobs.append({**twin, "id": f"j{i}"})
            continue
        job = _job(draw, i, present, traffic, role)
        if role == "running":
            _maybe_running(draw, job, nodes, free)
        elif role == "unfit":  # fits nowhere or runs nowhere, first in the top queue
            if draw(st.booleans()):
                job["scale_factor"] = sum(sizes) + 1
            else:
                job["throughput"] = dict.fromkeys(present, 0.0)
            job.update(arrival_time=0.0, attained_service=0.0)
        jobs.append(job)
    counts = {t: sum(n["gpus"] for n in nodes if n["gpu_type"] == t) for t in present}
    return {
        "gpu_types": [{"name": t, "count": c} for t, c in counts.items()],
        "nodes": nodes,
        "jobs": jobs,
        "now": 1000.0,
        "service_distribution": {"samples": draw(st.sampled_from(SAMPLES))},
    }


SAMPLES = [[50.0, 500.0], [120.0, 120.0, 900.0, 5000.0], [10.0]]


def _job(draw: st.DrawFn, i: int, types: list[str], traffic: bool, role: str) -> dict[str, Any]:
    # Running jobs mostly below the top queue, the others mostly in it: preemptions pay.
    served = [50.0, 100.0, 150.0, 400.0] if role == "running" else [0.0, 0.0, 0.0, 50.0, 150.0]
    job: dict[str, Any] = {
        "id": f"j{i}",
        "scale_factor": draw(st.integers(1, 3)),
        "throughput": {t: draw(st.sampled_from([0.0, 1.0, 1.0, 2.5])) for t in types},
        "attained_service": draw(st.sampled_from(served)),
    }
    drawn: list[tuple[str, list[Any]]] = [
        ("arrival_time", [0.0, 1.0, 1.0, 2.0, None]),
        ("tensor_sizes", TENSORS),
        ("overhead_seconds", [1.1, 1.25, None, 2.9, 62.0]),
        ("pending_seconds", [None, 0.0, 500.0]),
        ("queue_order", [None, None, 0.0, 1.0, 1.0, 4.0]),
    ]
    for key, values in drawn:
        value = draw(st.sampled_from(values))
        if value is not None:
            job[key] = value
    if not traffic and draw(st.integers(0, 5)) == 0:
        job["consolidate"] = True
    return job


def _maybe_running(
    draw: st.DrawFn, job: dict[str, Any], nodes: list[dict[str, Any]], free: list[int]
) -> None:
    """Place the job on free GPUs of one type, nodes in a drawn order (so the placement's keys
    need not follow the nodes'), if it fits."""
    kind = draw(st.sampled_from(sorted({n["gpu_type"] for n in nodes})))
    order = draw(st.permutations([i for i, n in enumerate(nodes) if n["gpu_type"] == kind]))
    if sum(free[i] for i in order) < job["scale_factor"]:
        return
    placement, left = {}, job["scale_factor"]
    for i in order:
        take = min(free[i], left)
        if take:
            placement[nodes[i]["id"]] = take
            free[i] -= take
            left -= take
    job["placement"] = placement
    job["throughput"][kind] = 1.0
    job["started_at"] = draw(st.sampled_from([0.0, 5.0, 5.0, 9.0]))


admission_options = st.fixed_dictionaries(
    {
        "thresholds": st.sampled_from([[100.0], [100.0, 300.0]]),
        "preemption_cost": st.sampled_from([0.0, 1.45, 30.0]),
        "max_preemptions": st.sampled_from([None, None, 0, 1]),
        "promote_knob": st.sampled_from([None, None, 1.0]),
        "pack_limit": st.sampled_from([0.5, 0.7]),
    }
)


def _case(name: str) -> dict[str, Any]:
    """A snapshot of `data`, for `tiresias_gittins` too."""
    snap: dict[str, Any] = json.loads((Path(__file__).parent / "data" / f"{name}.json").read_text())
    return {**snap, "service_distribution": {"samples": [50.0, 500.0]}}


PLAIN = {
    "thresholds": [3200.0],
    "preemption_cost": 0.0,
    "max_preemptions": None,
    "promote_knob": None,
    "pack_limit": 0.5,
}


@REPEATABLE
@given(snapshots(), admission_options, st.sampled_from(["las", "gittins", "gittins_sup"]))
@example(_case("tiresias_two_unfit_jobs"), PLAIN, "las")
@example(_case("tiresias_unfit_job"), PLAIN, "gittins")
@example(_case("tiresias_empty_queue"), {**PLAIN, "max_preemptions": 0}, "gittins_sup")
def test_exact_admission_is_the_lexicographic_optimum(
    snap: dict[str, Any], options: dict[str, Any], kind: str
) -> None:
    policy = "tiresias_las" if kind == "las" else "tiresias_gittins"
    if kind == "gittins_sup":
        options = {**options, "quantum": "sup"}
    note(f"snapshot: {snap}\noptions: {options}")
    result = solve(snap, policy=policy, options=options)
    assert result.status.value == "optimal"
    runs = check_schedule(snap, result, pack_limit=options["pack_limit"])
    stopped = sum(1 for j, r in zip(snap["jobs"], runs, strict=True) if "placement" in j and not r)
    cap = options["max_preemptions"]
    assert cap is None or stopped <= cap
    gittins = policy == "tiresias_gittins"
    got = answer_score(snap, options, runs, gittins)
    assert got == best_admission(snap, options, gittins)


@REPEATABLE
@given(snapshots(traffic=True), st.booleans())
def test_network_load_placement_is_optimal_job_after_job(
    snap: dict[str, Any], tie_break: bool
) -> None:
    note(f"snapshot: {snap}")
    result = solve(snap, policy="network_load_placement", options={"tie_break": tie_break})
    assert result.status.value == "optimal"
    check_schedule(snap, result, consolidate=False)
    check_network(snap, result, tie_break)
