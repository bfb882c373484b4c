"""The explanation block on hand-solved cases: the right binding rows and shadow prices, a job
that runs nowhere, a gang that fits nowhere and a job held by capacity told apart; the same on
every backend that reports duals, marked unavailable where the duals are missing."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from apportion.formulations.fairness.max_min import POLICY as MAX_MIN
from apportion.solver import solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.context import SolveContext
from apportion.solver.explain import AllocationEvidence, Reason, explain
from apportion.solver.options import SolveOptions
from apportion.solver.snapshot import parse_snapshot

LP_BACKENDS = ["highs", "clarabel", "cvxpy", "pulp"]


def mixed() -> dict[str, Any]:
    """One v100 shared by a and b (each u = 0.5 / (1/4) = 2); c alone on k80 with all of its
    time (u = 1 / (3/4) = 4/3, the minimum, held by its time row, so no GPU would raise it);
    `wide` needs 4 GPUs of a type with 1; `none` has no throughput at all."""
    return {
        "gpu_types": [{"name": "v100", "count": 1}, {"name": "k80", "count": 3}],
        "jobs": [
            {"id": "a", "throughput": {"v100": 1}},
            {"id": "b", "throughput": {"v100": 1}},
            {"id": "c", "throughput": {"k80": 1}},
            {"id": "wide", "throughput": {"v100": 1}, "scale_factor": 4},
            {"id": "none", "throughput": {}},
        ],
    }


def three_on_two() -> dict[str, Any]:
    """Three identical jobs on 2 GPUs: t* = 2/3, and with 2 + ε GPUs (2 + ε)/3, so the
    max-min price is 1/3 per GPU; the total normalized throughput is N itself (price 1)."""
    return {
        "gpu_types": [{"name": "g", "count": 2}],
        "jobs": [{"id": i, "throughput": {"g": 1}} for i in "xyz"],
    }


def by_id(result: Any) -> dict[str, Any]:
    return {job.id: job for job in result.explanation.jobs}


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_mixed_case_tells_the_reasons_apart(backend: str) -> None:
    result = solve(mixed(), explain=True, backend=backend)
    explanation = result.explanation
    assert explanation is not None and explanation.available
    jobs = by_id(result)
    for held in ("a", "b"):  # the Pareto stage fills the v100: capacity holds them
        assert jobs[held].code == Reason.CAPACITY
        assert jobs[held].rows == ["capacity[v100]"]
        assert "none is free" in jobs[held].why
    # c's floor sits 1e-9 below its ceiling: an interior point may share the dual between
    # its floor and its time row (degenerate), a vertex puts it on the time row.
    assert jobs["c"].code == Reason.FULL_TIME and "time[c]" in jobs["c"].rows
    assert jobs["wide"].code == Reason.GANG_DOES_NOT_FIT
    assert jobs["none"].code == Reason.NO_THROUGHPUT
    v100, k80 = explanation.gpu_types
    assert v100.binding and v100.idle == pytest.approx(0.0, abs=1e-6)
    assert not k80.binding and k80.idle == pytest.approx(2.0, rel=1e-6)
    # The total normalized throughput: ε more v100 time is ε / prop = 4ε; c cannot use k80.
    assert explanation.price_stage == "pareto"
    assert v100.shadow_price == pytest.approx(4.0, rel=1e-6)
    assert k80.shadow_price == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_the_max_min_bottleneck_is_named(backend: str) -> None:
    """Without the Pareto stage a and b may get anything from 1/3 up (the optimum is not
    unique there), but c's role is: its share row and its time row hold the level."""
    result = solve(mixed(), explain=True, pareto=False, backend=backend)
    explanation = result.explanation
    assert explanation is not None and explanation.price_stage == "max-min"
    c = by_id(result)["c"]
    assert c.code == Reason.BOTTLENECK and c.rows == ["share[c]", "time[c]"]
    assert c.level == pytest.approx(4 / 3, rel=1e-6)
    # No extra GPU of either type raises the minimum, and none taken away lowers it.
    assert [g.shadow_price for g in explanation.gpu_types] == pytest.approx([0.0, 0.0], abs=1e-6)


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_three_jobs_on_two_gpus(backend: str) -> None:
    result = solve(three_on_two(), explain=True, pareto=False, backend=backend)
    explanation = result.explanation
    assert explanation is not None
    (gpu,) = explanation.gpu_types
    assert gpu.binding
    assert gpu.shadow_price == pytest.approx(1 / 3, rel=1e-6)
    for job in explanation.jobs:
        assert job.code == Reason.BOTTLENECK
        # Merged into one group, the three share the model's row of their first member.
        assert job.rows == ["share[x]", "capacity[g]"]
        assert "with 2 other jobs" in job.why
        assert job.level == pytest.approx(2 / 3, rel=1e-6)
    apart = solve(three_on_two(), explain=True, pareto=False, merge_identical=False)
    assert apart.explanation is not None
    assert [j.rows for j in apart.explanation.jobs] == [
        [f"share[{i}]", "capacity[g]"] for i in "xyz"
    ]


@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_pareto_stage_prices_say_so(backend: str) -> None:
    result = solve(three_on_two(), explain=True, backend=backend)
    explanation = result.explanation
    assert explanation is not None and explanation.price_stage == "pareto"
    assert "pareto" in explanation.note
    # The floors use all but 1e-9 of the GPUs, so the total is N for N ≥ 2 and infeasible
    # below: any dual ≥ 1 is optimal (degenerate). Every one lies at or above the right
    # derivative, 1; a vertex gives exactly that.
    price = explanation.gpu_types[0].shadow_price
    assert price is not None and price >= 1.0 - 1e-6
    if backend == "highs":
        assert price == pytest.approx(1.0, rel=1e-6)


def test_water_filling_reports_levels_and_iterations() -> None:
    result = solve(mixed(), explain=True, policy="water_filling")
    jobs = by_id(result)
    # c freezes first at 4/3; a and b at 2 in the next level.
    assert jobs["c"].level == pytest.approx(4 / 3, rel=1e-6) and jobs["c"].iteration == 1
    assert jobs["a"].level == pytest.approx(2.0, rel=1e-6) and jobs["a"].iteration == 2
    assert jobs["wide"].code == Reason.GANG_DOES_NOT_FIT


def test_without_duals_the_explanation_is_unavailable_not_wrong() -> None:
    """The final LP as a backend without duals returns it: no reasons are invented."""
    snap = parse_snapshot(mixed())
    problem = ClusterArrays.from_snapshot(snap)
    options = MAX_MIN.options.model_validate({"pareto": False})
    outcome = MAX_MIN.run(snap, problem, options, SolveContext.for_request(SolveOptions()))
    evidence = outcome.evidence
    assert isinstance(evidence, AllocationEvidence)
    stripped = tuple(
        replace(s, solution=replace(s.solution, row_dual=None, col_dual=None))
        for s in evidence.stages
    )
    used = problem.scale_factor @ outcome.allocation
    bare = explain(problem, replace(evidence, stages=stripped), outcome.allocation, used, {})
    assert not bare.available and "no duals" in bare.note
    codes = {job.id: job.code for job in bare.jobs}
    assert codes == {
        "a": Reason.UNAVAILABLE,
        "b": Reason.UNAVAILABLE,
        "c": Reason.UNAVAILABLE,
        "wide": Reason.GANG_DOES_NOT_FIT,
        "none": Reason.NO_THROUGHPUT,
    }
    assert [g.shadow_price for g in bare.gpu_types] == [None, None]
    assert [g.binding for g in bare.gpu_types] == [True, False]  # read from the allocation


def test_explain_is_off_by_default_and_leaves_the_document_unchanged() -> None:
    plain = json.loads(solve(mixed()).model_dump_json())
    assert "explanation" not in plain
    explained = json.loads(solve(mixed(), explain=True).model_dump_json())
    assert set(explained) - set(plain) == {"explanation"}
    assert np.allclose(
        [j["effective_throughput"] for j in plain["jobs"]],
        [j["effective_throughput"] for j in explained["jobs"]],
    )


def test_a_policy_without_evidence_says_so() -> None:
    result = solve(mixed(), explain=True, policy="max_throughput")
    explanation = result.explanation
    assert explanation is not None and not explanation.available
    assert by_id(result)["wide"].code == Reason.GANG_DOES_NOT_FIT


def test_an_unreachable_deadline_is_told_from_the_data() -> None:
    """100 steps at 1 step/s from t = 0 finish at 100 at the earliest, after the deadline 50;
    10 steps can finish by 50, so that job gets no such reason. (A policy that hands no
    evidence: min cost with SLOs hands its own, tested with it.)"""
    snapshot = {
        "now": 0,
        "gpu_types": [{"name": "g", "count": 2, "price_per_hour": 1.0}],
        "jobs": [
            {"id": "late", "throughput": {"g": 1}, "steps_remaining": 100, "deadline": 50},
            {"id": "fine", "throughput": {"g": 1}, "steps_remaining": 10, "deadline": 50},
        ],
    }
    jobs = by_id(solve(snapshot, policy="max_throughput", explain=True))
    assert jobs["late"].code == Reason.DEADLINE_UNREACHABLE
    assert jobs["late"].detail == {"earliest_alone": pytest.approx(100.0)}
    assert jobs["fine"].code == Reason.NOT_EXPLAINED
