"""Minimum cost subject to SLOs (FORMULATIONS §4): hand-solved, infeasible SLO sets, oracles."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from apportion.solver import InputError, Status, solve
from tests.allocation_checks import assert_feasible_allocation
from tests.formulations.fairness.lp_oracle import Cluster, random_snapshot


def _gpu(name: str, count: int, price: float) -> dict:
    return {"name": name, "count": count, "price_per_hour": price}


def test_cheapest_types_meet_the_deadlines() -> None:
    # k80 costs 1, v100 3 per GPU-hour. a needs 1 step/s (10 steps in 10 s), T = (1, 2): per step/s
    # k80 costs 1, v100 1.5. b needs 1.5, T = (1, 3): per step/s both cost 1, but k80 alone gives
    # at most 1. So a takes all of k80 (1) and b half of v100 (1.5): 2.5 per hour, the minimum.
    snapshot = {
        "now": 100.0,
        "gpu_types": [_gpu("k80", 1, 1.0), _gpu("v100", 1, 3.0)],
        "jobs": [
            {
                "id": "a",
                "throughput": {"k80": 1, "v100": 2},
                "steps_remaining": 10,
                "deadline": 110,
            },
            {
                "id": "b",
                "throughput": {"k80": 1, "v100": 3},
                "steps_remaining": 15,
                "deadline": 110,
            },
            {"id": "best-effort", "throughput": {"k80": 1}},
        ],
    }
    result = solve(snapshot, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(2.5)
    x = assert_feasible_allocation(result, snapshot)
    assert x[:2] == pytest.approx(np.array([[1.0, 0.0], [0.0, 0.5]]))
    assert result.summary["slo_missed"] == []
    assert result.job("a").metrics == {
        "required_throughput": pytest.approx(1.0),
        "slo_met": True,
        "finish_time": pytest.approx(110.0),
    }
    assert result.job("best-effort").allocation == {}
    assert "no deadline" in (result.job("best-effort").reason or "")


# One GPU at price 1, T = 1: a and b need 0.5 each, c needs 0.6. At most two fit ({a, b}: 1.0);
# {a, c} and {b, c} need 1.1. Counting, {a, b} at cost 1.0; weighing with w_c = 3, {c} alone
# (3 > 2) at cost 0.6.
OVERSUBSCRIBED = {
    "now": 0.0,
    "gpu_types": [_gpu("v100", 1, 1.0)],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 10},
        {"id": "b", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 10},
        {"id": "c", "weight": 3, "throughput": {"v100": 1}, "steps_remaining": 6, "deadline": 10},
    ],
}


def test_when_not_all_fit_the_most_slos_are_met() -> None:
    result = solve(OVERSUBSCRIBED, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.0)
    assert result.summary["slo_missed"] == ["c"]
    assert result.job("c").metrics["slo_met"] is False
    assert "SLO given up" in (result.job("c").reason or "")
    assert any("cannot be met together" in w for w in result.warnings)


def test_by_weight_the_most_valuable_slos_are_met() -> None:
    result = solve(OVERSUBSCRIBED, policy="min_cost_slo", options={"maximize": "weight"})
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(0.6)
    assert sorted(result.summary["slo_missed"]) == ["a", "b"]


def test_among_equally_many_slos_the_cheapest_set_wins() -> None:
    # k80 1 GPU at 1, v100 1 GPU at 10. a and b: T = (1, 2), need 1 step/s; c: v100 only, T = 1,
    # needs 1. All three cannot fit (c takes all of v100, a and b then share one k80). Of the
    # two-job sets, {a, b} costs 1 + 5 (a on k80, b half of v100) and {a, c} or {b, c} cost 11:
    # the answer must be {a, b}, not merely some set of two.
    snapshot = {
        "now": 0.0,
        "gpu_types": [_gpu("k80", 1, 1.0), _gpu("v100", 1, 10.0)],
        "jobs": [
            {"id": "c", "throughput": {"v100": 1}, "steps_remaining": 10, "deadline": 10},
            {"id": "a", "throughput": {"k80": 1, "v100": 2}, "steps_remaining": 10, "deadline": 10},
            {"id": "b", "throughput": {"k80": 1, "v100": 2}, "steps_remaining": 10, "deadline": 10},
        ],
    }
    result = solve(snapshot, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.summary["slo_missed"] == ["c"]
    assert result.objective == pytest.approx(6.0)


def test_slos_that_cannot_be_met_alone_are_named_with_the_reason() -> None:
    snapshot = {
        "now": 50.0,
        "gpu_types": [_gpu("v100", 1, 1.0)],
        "jobs": [
            {"id": "late", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 40},
            {"id": "too-fast", "throughput": {"v100": 1}, "steps_remaining": 20, "deadline": 60},
            {"id": "done", "throughput": {"v100": 1}, "steps_remaining": 0, "deadline": 60},
            {"id": "ok", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 60},
        ],
    }
    result = solve(snapshot, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(0.5)
    assert sorted(result.summary["slo_missed"]) == ["late", "too-fast"]
    assert "deadline has passed" in (result.job("late").reason or "")
    assert result.job("late").metrics["required_throughput"] is None
    assert "needs 2 steps/s" in (result.job("too-fast").reason or "")
    assert result.job("done").metrics["slo_met"] is True


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        (lambda s: s.pop("now"), ("snapshot", "now")),
        (
            lambda s: s["gpu_types"][0].pop("price_per_hour"),
            ("snapshot", "gpu_types", 0, "price_per_hour"),
        ),
        (lambda s: s["jobs"][0].pop("steps_remaining"), ("snapshot", "jobs", 0, "steps_remaining")),
    ],
)
def test_missing_inputs_are_named(change: object, loc: tuple) -> None:
    snapshot = {
        "now": 0.0,
        "gpu_types": [_gpu("v100", 1, 1.0)],
        "jobs": [{"id": "a", "throughput": {"v100": 1}, "steps_remaining": 5, "deadline": 10}],
    }
    change(snapshot)  # type: ignore[operator]
    with pytest.raises(InputError) as info:
        solve(snapshot, policy="min_cost_slo")
    assert [e.loc for e in info.value.errors] == [loc]


@pytest.mark.parametrize("maximize", ["count", "weight"])
@pytest.mark.parametrize("seed", range(8))
def test_random_instances_against_brute_force(seed: int, maximize: str) -> None:
    rng = np.random.default_rng(300 + seed)
    snapshot = random_snapshot(rng, int(rng.integers(3, 7)), int(rng.integers(1, 3)))
    snapshot["now"] = 0.0
    for gpu in snapshot["gpu_types"]:
        gpu["count"] = int(rng.integers(1, 3))  # tight: most instances cannot meet every SLO
    for job in snapshot["jobs"]:
        fastest = max(job["throughput"].values())
        job["deadline"] = job["steps_remaining"] / fastest * float(rng.uniform(0.95, 2.5))
        job["weight"] = float(rng.choice([1, 2, 3]))
    cluster = Cluster.of(snapshot)
    need = np.array([j["steps_remaining"] / j["deadline"] for j in snapshot["jobs"]])
    value = np.array([j["weight"] for j in snapshot["jobs"]]) if maximize == "weight" else None
    result = solve(snapshot, policy="min_cost_slo", options={"maximize": maximize})
    assert result.status is Status.OPTIMAL
    x = assert_feasible_allocation(result, snapshot)
    met = np.array([j.metrics["slo_met"] for j in result.jobs])
    eff = (cluster.t * x).sum(axis=1)
    assert (eff[met] >= need[met] * (1 - 1e-6)).all()  # every SLO declared met is met
    # Brute force: the largest value any feasible set reaches, then the cheapest such set.
    value = np.ones(need.size) if value is None else value
    best_value, best_cost = 0.0, 0.0
    for size in range(1, need.size + 1):
        for chosen in itertools.combinations(range(need.size), size):
            jobs = np.array(chosen)
            cost = cluster.min_cost(jobs, need[jobs])
            if cost is None:
                continue
            total = float(value[jobs].sum())
            if total > best_value + 1e-9 or (abs(total - best_value) <= 1e-9 and cost < best_cost):
                best_value, best_cost = total, cost
    assert float(value[met].sum()) == pytest.approx(best_value)
    assert result.objective == pytest.approx(best_cost, rel=1e-6, abs=1e-9)


# No job has a deadline: the only answer would be no allocation at no cost, "optimal" and
# useless. The policy refuses it as input that lacks what it needs, at `jobs`, naming the field.
NO_DEADLINES = {
    "now": 0.0,
    "gpu_types": [_gpu("v100", 2, 3.0)],
    "jobs": [
        {"id": "a", "throughput": {"v100": 1}, "steps_remaining": 100},
        {"id": "b", "throughput": {"v100": 2}, "steps_remaining": 50},
    ],
}


def test_a_snapshot_without_any_deadline_is_an_input_error() -> None:
    with pytest.raises(InputError) as info:
        solve(NO_DEADLINES, policy="min_cost_slo")
    (error,) = info.value.errors
    assert error.loc == ("snapshot", "jobs")
    assert "deadline" in error.msg and "min_cost_slo" in error.msg
    # One deadline is enough: the job without one is best effort, with no time and a reason.
    one = {**NO_DEADLINES, "jobs": [{**NO_DEADLINES["jobs"][0], "deadline": 200.0}]}
    one["jobs"].append(NO_DEADLINES["jobs"][1])
    result = solve(one, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.job("a").allocation == pytest.approx({"v100": 0.5})  # 100 steps in 200 s
    assert result.job("b").allocation == {} and "no deadline" in (result.job("b").reason or "")
    assert result.objective == pytest.approx(0.5 * 3.0)


def test_a_deadline_met_only_at_full_speed_is_met() -> None:
    """Found by the edge-case property test: a deadline of R / T, met by running all the time on
    the one GPU, was given up as unreachable because R / (R / T) is one ulp above T in floating
    point ("needs 3.734 steps/s, at most 3.734"). It is judged as a met SLO is, to 1e-6."""
    speed = 3.734
    assert 10.0 / (10.0 / speed) > speed  # the round-off the policy must not trip on
    job = {"throughput": {"v100": speed}, "steps_remaining": 10.0, "deadline": 10.0 / speed}
    snapshot = {
        "now": 0.0,
        "gpu_types": [_gpu("v100", 1, 0.5)],
        "jobs": [{"id": "a", **job}, {"id": "b", **job}],
    }
    result = solve(snapshot, policy="min_cost_slo")
    assert result.status is Status.OPTIMAL
    assert result.summary["slo_met"] == 1 and result.objective == pytest.approx(0.5)
    met = [j for j in result.jobs if j.metrics["slo_met"]]
    assert len(met) == 1 and met[0].allocation == {"v100": pytest.approx(1.0)}
    missed = next(j for j in result.jobs if not j.metrics["slo_met"])
    assert missed.reason is not None and missed.reason.startswith("SLO given up")
