"""The contention placement against the independent reference (`reference_brute`): on tiny
random snapshots (1–2 nodes, at most 4 jobs) every objective's answer is a schedule the rules
allow and is worth the best one by the written definitions. The snapshots seek out the edge
cases: running jobs that may stay, stop or move (moves none, preempt, migrate), running jobs of a
better level than the queue (pinned before the solve), identical jobs, jobs that fit nowhere,
empty queues and snapshots, jobs without a priority key, tied keys and tied sensitivities."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion import solve
from apportion.solver.status import Status
from tests.formulations.placement import reference_brute as ref

SHAPES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 3: [(1, 3)], 4: [(1, 4), (2, 2)], 5: [(5, 1)]}
#: The schedule objective's documented tie-break: staying is worth ε per GPU more than a move.
EPSILON = 1e-4
SETTINGS = settings(
    max_examples=250,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _job(rng: random.Random, name: str) -> dict[str, Any]:
    job: dict[str, Any] = {
        "id": name,
        "workload_class": rng.choice("AB"),
        "throughput": {"gpu": 1.0},
        "attained_service": 100.0 * 2 ** rng.randint(0, 5),
    }
    if rng.random() > 0.2:  # else no priority key for SRTF
        # Powers of two: no two gaps between keys are equal, so the levels are unambiguous.
        job["steps_remaining"] = 100.0 * 2 ** rng.randint(0, 5)
    return job


def _running(rng: random.Random, free: dict[str, int], whole: bool) -> dict[str, int]:
    """A placement on free GPUs, uneven across nodes sometimes, often a whole node (what a
    better job must preempt to start; always with `whole`); empty when nothing is free."""
    chosen = [n for n in free if free[n] > 0 and (whole or rng.random() < 0.7)][: 1 if whole else 2]
    placement = {
        n: free[n] if whole or rng.random() < 0.5 else rng.randint(1, free[n]) for n in chosen
    }
    for n, g in placement.items():
        free[n] -= g
    return placement


def random_case(seed: int) -> tuple[ref.Case, dict[str, Any]]:
    """A snapshot and its contention table; half of them crowded: one 4-GPU node, all of it held
    by the first job, with small jobs waiting (who may displace it, and who fills what it
    leaves)."""
    rng = random.Random(seed)
    crowded = rng.random() < 0.5
    nodes = {f"n{i}": rng.choice([1, 2, 4]) for i in range(rng.randint(1, 2))}
    if crowded:
        nodes = {"n0": 4}
    free = dict(nodes)
    jobs: list[dict[str, Any]] = []
    for i in range(rng.choice([3, 4]) if crowded else rng.choice([0, 1, 2, 3, 4])):
        if jobs and rng.random() < 0.25:  # identical to an earlier job, but waiting
            twin = {k: v for k, v in jobs[-1].items() if k != "placement"}
            twin["scale_factor"] = ref.demand(jobs[-1])
            jobs.append({**twin, "id": f"j{i}"})
            continue
        job = _job(rng, f"j{i}")
        runs = (i == 0) if crowded else rng.random() < 0.5
        placement = _running(rng, free, whole=crowded) if runs else {}
        if placement:
            job["placement"] = placement
            job["scale_factor"] = sum(placement.values())
        else:
            sizes = [1, 2] if crowded else [1, 2, 2, 3, 4, 5]  # 5 fits nowhere
            job["scale_factor"] = rng.choice(sizes)
        jobs.append(job)
    demands = {ref.demand(job) for job in jobs} | {1}
    configs = [(c, g, k) for c in "AB" for g in sorted(demands) for k in (1, 2) if k <= g]
    table = {
        (a, b): rng.choice([1.0, round(rng.uniform(1.0, 3.0), 3)]) for a in configs for b in configs
    }
    case = ref.Case(
        nodes, jobs, SHAPES, table, rng.choice([None, 2.0]), rng.choice(["multi_node", "all"])
    )
    contention: dict[str, Any] = {
        "entries": [
            {
                "target": dict(zip(("workload_class", "gpus", "nodes"), a, strict=True)),
                "co_runner": dict(zip(("workload_class", "gpus", "nodes"), b, strict=True)),
                "cs": v,
            }
            for (a, b), v in table.items()
        ]
    }
    if case.max_cs is not None:
        contention["max_cs"] = case.max_cs
    snapshot = {
        "gpu_types": [{"name": "gpu", "count": case.gpus}],
        "nodes": [{"id": n, "gpus": g, "gpu_type": "gpu"} for n, g in nodes.items()],
        "jobs": jobs,
        "contention": contention,
    }
    return case, snapshot


def _options(rng: random.Random, case: ref.Case, **more: Any) -> dict[str, Any]:
    return {
        "shapes": {str(d): [list(s) for s in v] for d, v in SHAPES.items()},
        "contention_scope": case.scope,
        "w1": rng.choice([0.0, 0.3, 0.5, 0.8, 1.0]),
        "mip_gap": 0.0,
        **more,
    }


def _placed(result: Any) -> ref.Schedule:
    return {job.id: job.placement for job in result.jobs if job.placement}


def _explained(result: Any) -> None:
    for job in result.jobs:
        assert job.placement or job.reason, f"{job.id} does not run and says nothing"


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_the_schedule_objective_is_the_best_schedule_by_its_definition(seed: int) -> None:
    case, snapshot = random_case(seed)
    rng = random.Random(seed + 1)
    moves = rng.choice(["none", "preempt", "preempt", "migrate", "migrate"])
    priority = rng.choice(["srtf", "las"])
    count = rng.choice([1, 2, 8, 8])
    restart = rng.choice([0.0, 0.2])
    options = _options(
        rng,
        case,
        objective="schedule",
        moves=moves,
        priority=priority,
        priority_levels=count,
        priority_tolerance=0.0,
        restart_seconds=restart * 300.0,
        horizon_seconds=300.0,
    )
    result = solve(snapshot, policy="contention_placement", options=options)
    assert result.status is Status.OPTIMAL
    placed = _placed(result)
    allowed = list(ref.schedules(case, moves))
    assert placed in allowed  # every job whole, in a shape, within the nodes, moves obeyed
    keys = {job["id"]: ref.key(job, priority) for job in case.jobs}
    pi = ref.weights(case, ref.levels(keys, count, 0.0))
    w1 = options["w1"]
    optimum = ref.best(ref.schedule_value(case, s, w1, restart, pi) for s in allowed)
    got = ref.schedule_value(case, placed, w1, restart, pi)
    running = sum(ref.demand(job) for job in case.jobs if "placement" in job)
    slack = (1 - w1) * running * EPSILON / case.gpus + 1e-9 * max(1.0, abs(optimum))
    assert got >= optimum - slack, (seed, options, placed)
    restarted = sum(
        ref.demand(job)
        for job in case.jobs
        if "placement" in job and placed.get(job["id"]) != job["placement"]
    )
    tie_break = (1 - w1) * restarted * EPSILON / case.gpus
    assert result.objective == pytest.approx(got - tie_break, rel=1e-9, abs=1e-9)
    _explained(result)


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_the_linear_and_reference_objectives_start_the_best_jobs(seed: int) -> None:
    case, snapshot = random_case(seed)
    if not case.jobs:
        return  # the mean over no job is not defined: nothing to compare
    rng = random.Random(seed + 2)
    objective = rng.choice(["linear", "reference"])
    penalty = "worst" if objective == "reference" else rng.choice(["worst", "additive"])
    options = _options(rng, case, objective=objective, penalty=penalty)
    result = solve(snapshot, policy="contention_placement", options=options)
    assert result.status is Status.OPTIMAL
    placed = _placed(result)
    allowed = list(ref.schedules(case, "none"))  # running jobs never move here
    assert placed in allowed
    w1 = options["w1"]

    def value(s: ref.Schedule) -> float:
        if objective == "linear":
            return ref.linear(case, s, w1, penalty)
        return ref.reference(case, s, w1)

    optimum = ref.best(value(s) for s in allowed)
    assert value(placed) == pytest.approx(optimum, abs=1e-9), (seed, options, placed)
    assert result.objective == pytest.approx(optimum, abs=1e-9)
    _explained(result)
