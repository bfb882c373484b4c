"""Every elastic policy against the independent reference (`reference`: every integer choice
enumerated, or the time-share LP by scipy) on tiny random snapshots made to hold the cases that
broke before: pinned jobs (one configuration matched twice, more pinned than fits), duplicate
configurations (same type and GPUs, another batch size), identical jobs, jobs that fit
nowhere, empty job lists, running jobs with restart discounts, and ties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apportion.solver import Status, solve
from tests.formulations.elastic import reference
from tests.formulations.elastic.reference import Choice, Job

GOODPUTS = (0.0, 1.0, 1.0, 1.5, 2.0, 3.0)
EXAMPLES = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, Any]:
    types: list[dict[str, Any]] = [{"name": "a", "count": draw(st.integers(1, 4))}]
    if draw(st.booleans()):
        types.append({"name": "b", "count": draw(st.integers(1, 3))})
    jobs: list[dict[str, Any]] = []
    for j in range(draw(st.integers(0, 4))):
        if jobs and draw(st.integers(0, 3)) == 0:  # identical to the one before
            jobs.append({**jobs[-1], "id": f"j{j}"})
            continue
        jobs.append({"id": f"j{j}", "weight": draw(st.sampled_from([1.0, 2.0])),
                     "elastic": _elastic(draw, [t["name"] for t in types])})  # fmt: skip
    return {"gpu_types": types, "jobs": jobs}


def _elastic(draw: st.DrawFn, names: list[str]) -> dict[str, Any]:
    configs: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 3))):
        if draw(st.booleans()) and configs:  # the one before at another batch size
            config = {**configs[-1], "goodput": draw(st.sampled_from(GOODPUTS))}
        else:
            gpus = draw(st.sampled_from([1, 1, 2, 2, 4, 5]))  # 5 fits no type
            config = {"gpu_type": draw(st.sampled_from(names)), "gpus": gpus,
                      "nodes": draw(st.sampled_from([1, 2])) if gpus > 1 else 1,
                      "goodput": draw(st.sampled_from(GOODPUTS))}  # fmt: skip
        configs.append({**config, "batch_size": 32 * (i + 1)})
    spec: dict[str, Any] = {
        "configurations": configs,
        "remaining": draw(st.sampled_from([0.0, 10.0, 50.0])),
    }
    if draw(st.integers(0, 5)) == 0:
        spec["max_gpus"] = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()) and configs:
        now = draw(st.sampled_from(configs))
        spec["current"] = {"gpu_type": now["gpu_type"], "gpus": now["gpus"]}
        if draw(st.booleans()):
            spec["current"]["nodes"] = now["nodes"]
        spec["pinned"] = draw(st.booleans())
        spec["age"] = draw(st.sampled_from([10.0, 100.0, 400.0]))
        spec["restarts"] = draw(st.integers(0, 3))
        spec["restart_seconds"] = draw(st.sampled_from([0.0, 30.0]))
    return spec


def _picked(result: Any, snapshot: dict[str, Any], jobs: list[Job]) -> Choice:
    """Each job's configuration, checked: one of its options (a pinned job's own), within
    the GPU counts, the GPUs reported as the configurations hold."""
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    used = dict.fromkeys(counts, 0)
    out: list[int | None] = []
    for job, answer in zip(jobs, result.jobs, strict=True):
        c = answer.metrics.get("configuration")
        out.append(c)
        if c is None:
            assert answer.allocation == {} and answer.reason
            assert not (job.pinned and job.options)  # a pinned job runs
            continue
        assert c in job.options
        assert answer.allocation == {job.gpu_type[c]: 1.0}
        assert answer.metrics["gpus"] == job.gpus[c]
        used[job.gpu_type[c]] += job.gpus[c]
    assert all(used[k] <= counts[k] for k in counts)
    assert {u.name: u.used for u in result.gpu_types} == pytest.approx(used)
    return tuple(out)


def _infeasible(result: Any, found: list[Choice]) -> bool:
    """No choice fits (pinned jobs hold more than there is): the answer must say so."""
    if found:
        return False
    assert result.status is Status.INFEASIBLE
    return True


@EXAMPLES
@given(
    snapshot=snapshots(),
    p=st.sampled_from([-0.5, -1.0, 1.0]),
    lam=st.sampled_from([1.1, 0.6]),
    restart=st.booleans(),
)
def test_sia_is_the_best_choice(
    snapshot: dict[str, Any], p: float, lam: float, restart: bool
) -> None:
    options = {"p": p, "lambda_n": lam, "restart_factor": restart, "mip_gap": 0.0}
    result = solve(snapshot, policy="sia", options=options)
    jobs = reference.read(snapshot)
    found = list(reference.choices(snapshot, jobs))
    if _infeasible(result, found):
        return
    scores = [reference.sia(jobs, c, p, lam, restart) for c in found]
    best = min(scores) if p < 0 else max(scores)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
    mine = reference.sia(jobs, _picked(result, snapshot, jobs), p, lam, restart)
    assert mine == pytest.approx(best, rel=1e-7, abs=1e-9)


@EXAMPLES
@given(snapshot=snapshots(), restart=st.booleans())
def test_max_goodput_is_the_best_choice(snapshot: dict[str, Any], restart: bool) -> None:
    options = {"restart_factor": restart, "mip_gap": 0.0}
    result = solve(snapshot, policy="elastic_max_goodput", options=options)
    jobs = reference.read(snapshot)
    found = list(reference.choices(snapshot, jobs))
    if _infeasible(result, found):
        return
    best = max(reference.goodput(jobs, c, restart) for c in found)
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(best, rel=1e-7, abs=1e-9)
    mine = reference.goodput(jobs, _picked(result, snapshot, jobs), restart)
    assert mine == pytest.approx(best, rel=1e-7, abs=1e-9)


@EXAMPLES
@given(snapshot=snapshots())
def test_ones_is_feasible_and_optimal_only_when_it_is(snapshot: dict[str, Any]) -> None:
    result = solve(snapshot, policy="ones", options={"mip_gap": 0.0})
    jobs = reference.read(snapshot)
    found = list(reference.choices(snapshot, jobs, ones=True))
    if _infeasible(result, found):
        return
    gpus, cost = reference.ones(jobs, _picked(result, snapshot, jobs))
    assert result.objective == pytest.approx(cost, rel=1e-9, abs=1e-9)
    assert result.summary["gpus_in_use"] == gpus
    if result.status is Status.OPTIMAL:
        scored = [reference.ones(jobs, c) for c in found]
        most = max(g for g, _ in scored)
        assert gpus == most
        assert cost == pytest.approx(min(x for g, x in scored if g == most), rel=1e-7, abs=1e-9)


@EXAMPLES
@given(snapshot=snapshots(), restart=st.booleans())
def test_max_min_is_the_lp_optimum(snapshot: dict[str, Any], restart: bool) -> None:
    result = solve(snapshot, policy="elastic_max_min", options={"restart_factor": restart})
    jobs = reference.read(snapshot)
    if _infeasible(result, list(reference.choices(snapshot, jobs))):
        return
    assert result.status is Status.OPTIMAL
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    assert all(u.used <= counts[u.name] + 1e-6 for u in result.gpu_types)
    for job, answer in zip(jobs, result.jobs, strict=True):
        if job.pinned and job.options:  # all its time in its one configuration
            c = job.options[0]
            assert answer.allocation == pytest.approx({job.gpu_type[c]: 1.0})
            assert answer.metrics["gpus"] == pytest.approx(job.gpus[c])
        elif not job.options:
            assert answer.allocation == {} and answer.reason
        else:
            assert sum(answer.allocation.values()) <= 1 + 1e-6
    shares = reference.max_min(snapshot, jobs, restart)
    if shares is None:
        assert result.objective is None
        return
    assert result.objective == pytest.approx(shares.level, rel=1e-6, abs=1e-9)
    inside = [
        (job, a) for job, a in zip(jobs, result.jobs, strict=True) if job.options and not job.pinned
    ]
    gains = [cast(float, a.metrics["normalized_goodput"]) for _, a in inside]
    for (job, _), got in zip(inside, gains, strict=True):
        assert got >= job.weight * shares.level * (1 - 1e-6) - 1e-9
    total = sum(got / job.weight for (job, _), got in zip(inside, gains, strict=True))
    assert total == pytest.approx(shares.total, rel=1e-6, abs=1e-8)


def test_empty_job_list() -> None:
    snapshot: dict[str, Any] = {"gpu_types": [{"name": "a", "count": 2}], "jobs": []}
    assert list(reference.choices(snapshot, [])) == [()]
    for policy in ("sia", "ones", "elastic_max_goodput"):
        result = solve(snapshot, policy=policy)
        assert result.status is Status.OPTIMAL and result.objective == 0.0
    assert solve(snapshot, policy="elastic_max_min").objective is None


def test_the_reference_gives_the_hand_worked_answers() -> None:
    """The snapshots of the pinned-job defects, answered by the reference as by hand."""
    data = Path(__file__).parent / "data"
    two = json.loads((data / "elastic_pinned_two_matching.json").read_text())
    jobs = reference.read(two)
    assert list(reference.choices(two, jobs)) == [(1,)]  # one GPU, the batch of most goodput
    assert reference.sia(jobs, (1,), -0.5, 1.1) == 1.0  # its Ĝ is 1
    pinned = json.loads((data / "elastic_max_min_pinned.json").read_text())
    shares = reference.max_min(pinned, reference.read(pinned))
    assert shares is not None and shares.level == pytest.approx(1.0)
