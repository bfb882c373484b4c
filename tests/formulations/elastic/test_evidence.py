"""Explanations of the elastic family: reason codes per job and exact per-type prices (the
model solved again with one more GPU), checked against brute force."""

from __future__ import annotations

import copy

import pytest

from apportion.solver import solve
from tests.conformance.cases_elastic import SHARES, TWO_TYPES
from tests.formulations.elastic import brute

# TWO_TYPES plus w, which needs two GPUs of a: it waits under Sia (a holds y on 2 and z on 1)
WITH_W = copy.deepcopy(TWO_TYPES)
WITH_W["jobs"].append(
    {"id": "w", "elastic": {"remaining": 5.0,
                            "configurations": [{"gpu_type": "a", "gpus": 2, "goodput": 1.0}]}}
)  # fmt: skip


def _with_more(snapshot: dict, gpu: str) -> dict:
    bigger = copy.deepcopy(snapshot)
    for t in bigger["gpu_types"]:
        if t["name"] == gpu:
            t["count"] += 1
    return bigger


@pytest.mark.parametrize(("policy", "minimize"), [("sia", True), ("elastic_max_goodput", False)])
def test_prices_are_the_gain_of_one_more_gpu(policy: str, minimize: bool) -> None:
    result = solve(WITH_W, policy=policy, options={"explain": True})
    explanation = result.explanation
    assert explanation is not None and explanation.price_stage == "one more GPU"
    score = brute.sia_value if minimize else brute.total_goodput
    for usage in explanation.gpu_types:
        bigger = _with_more(WITH_W, usage.name)
        values = [score(bigger, c) for c in brute.assignments(bigger)]
        better = min(values) if minimize else max(values)
        assert usage.shadow_price == pytest.approx(abs(better - result.objective), abs=1e-6)


def test_reasons_for_running_and_waiting_jobs() -> None:
    result = solve(WITH_W, policy="sia", options={"explain": True})
    assert result.explanation is not None
    jobs = {j.id: j for j in result.explanation.jobs}
    assert [jobs[i].code for i in "xyz"] == ["granted"] * 3
    assert jobs["x"].detail["configuration"] == 4
    w = jobs["w"]
    assert w.code == "capacity" and w.rows == ["capacity[a]"]
    # forced to run, w takes z's place at the same cost (λ for z instead of for w): no loss
    assert w.detail["objective_if_run"] == pytest.approx(result.objective)
    assert w.detail["loss"] == pytest.approx(0.0, abs=1e-9)


def test_a_restart_discount_is_lower_value() -> None:
    # y ran on a×1, which no longer runs (goodput 0); its one usable choice, a×2, restarts it:
    # after two restarts it is worth r = (100 − 60)/(100 + 30), A = r^−½ = 1.80 > λ = 1.1, so
    # it waits although a×2 fits the idle GPUs: for value, not for room
    snapshot = {
        "gpu_types": [{"name": "a", "count": 2}],
        "jobs": [{"id": "y", "elastic": {
            "configurations": [{"gpu_type": "a", "gpus": 1, "goodput": 0.0},
                               {"gpu_type": "a", "gpus": 2, "goodput": 1.9}],
            "current": {"gpu_type": "a", "gpus": 1},
            "age": 100.0, "restarts": 2, "restart_seconds": 30.0}}],
    }  # fmt: skip
    result = solve(snapshot, policy="sia", options={"explain": True})
    assert result.jobs[0].metrics["configuration"] is None
    assert result.objective == pytest.approx(1.1)
    assert result.explanation is not None
    job = result.explanation.jobs[0]
    assert job.code == "lower_value"
    assert job.detail["objective_if_run"] == pytest.approx((40 / 130) ** -0.5)
    assert job.detail["loss"] == pytest.approx((40 / 130) ** -0.5 - 1.1)


def test_max_min_bottlenecks_and_level_prices() -> None:
    result = solve(SHARES, policy="elastic_max_min", options={"explain": True})
    assert result.explanation is not None
    assert [j.code for j in result.explanation.jobs] == ["bottleneck", "bottleneck"]
    prices = {g.name: g.shadow_price for g in result.explanation.gpu_types}
    # a second GPU of a changes nothing (worked out by hand); of b: solve again and compare
    assert prices["a"] == pytest.approx(0.0, abs=1e-9)
    # the dual is the level's slope in b's count: with N_b = 1 + ε, q takes s = 0.8 + ε·0.8 of
    # b (p keeps 1 − s + ε): u_q = 1 + 0.5 s = u_p = (s − ε) + 3(1 − s + ε) → slope 0.4
    assert prices["b"] == pytest.approx(0.4)
    tiny = copy.deepcopy(SHARES)
    assert solve(tiny, policy="elastic_max_min").objective == pytest.approx(1.4)
