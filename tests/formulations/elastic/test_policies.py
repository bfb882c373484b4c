"""The elastic family's leaves against hand-solved cases and brute force over every assignment
(`brute`), with the returned configurations checked against the snapshot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.solver import InputError, Status, solve
from tests.conformance.cases_elastic import SHARES, TWO_TYPES
from tests.formulations.elastic import brute


def _picked(result: Any, snapshot: dict[str, Any]) -> tuple[int | None, ...]:
    """Each job's configuration index, checked against the snapshot and the GPU counts."""
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    used = dict.fromkeys(counts, 0)
    out: list[int | None] = []
    for job, spec in zip(result.jobs, snapshot["jobs"], strict=True):
        c = job.metrics.get("configuration")
        out.append(c)
        if c is None:
            assert job.allocation == {} and job.reason
            continue
        config = spec["elastic"]["configurations"][c]
        assert job.allocation == {config["gpu_type"]: 1.0}
        assert job.metrics["gpus"] == config["gpus"]
        assert job.effective_throughput == pytest.approx(config["goodput"])
        used[config["gpu_type"]] += config["gpus"]
    assert all(used[k] <= counts[k] for k in counts)
    for usage in result.gpu_types:
        assert usage.used == used[usage.name]
    return tuple(out)


def test_sia_hand_solved() -> None:
    result = solve(TWO_TYPES, policy="sia")
    assert result.status is Status.OPTIMAL
    assert _picked(result, TWO_TYPES) == (4, 1, 0)
    assert result.objective == pytest.approx(3.5**-0.5 + 1.9**-0.5 + 1.0)
    # power mean over the running jobs: (mean of Ĝ^p)^(1/p)
    mean = ((3.5**-0.5 + 1.9**-0.5 + 1) / 3) ** -2
    assert result.summary["power_mean"] == pytest.approx(mean)


def test_ones_keeps_gpus_busy_then_least_gpu_seconds() -> None:
    result = solve(TWO_TYPES, policy="ones")
    assert _picked(result, TWO_TYPES) == (4, 1, 0)
    assert result.summary["gpus_in_use"] == 5  # 6 cannot be reached (worked out by hand)
    assert result.objective == pytest.approx(100 / 3.5 * 2 + 10 / 1.9 * 2 + 50)


def test_max_goodput_hand_solved() -> None:
    result = solve(TWO_TYPES, policy="elastic_max_goodput")
    assert _picked(result, TWO_TYPES) == (4, 1, 0)
    assert result.objective == pytest.approx(6.4)


def test_restart_discount_keeps_a_job_where_it_runs() -> None:
    # y runs on a×1; age 100, one restart, 30 s per restart: r = (100 − 30)/(100 + 30).
    # a×2 is worth 1.9·r = 1.023 < … A = 1.023^−0.5 = 0.989 still beats staying (A = 1): it moves.
    # With two restarts r = 40/130 and a×2 is worth 0.585: A = 1.31 > 1.1 = λ, so it stays.
    snapshot = {
        "gpu_types": [{"name": "a", "count": 2}],
        "jobs": [{"id": "y", "elastic": {
            "configurations": [{"gpu_type": "a", "gpus": 1, "goodput": 1.0},
                               {"gpu_type": "a", "gpus": 2, "goodput": 1.9}],
            "current": {"gpu_type": "a", "gpus": 1},
            "age": 100.0, "restarts": 1, "restart_seconds": 30.0}}],
    }  # fmt: skip
    moved = solve(snapshot, policy="sia")
    assert _picked(moved, snapshot) == (1,)
    assert moved.jobs[0].metrics["restart"] is True
    assert moved.objective == pytest.approx((1.9 * 70 / 130) ** -0.5)
    snapshot["jobs"][0]["elastic"]["restarts"] = 2
    stays = solve(snapshot, policy="sia")
    assert _picked(stays, snapshot) == (0,)
    assert stays.jobs[0].metrics["restart"] is False
    # without the discount it moves whatever its restarts
    assert _picked(solve(snapshot, policy="sia", options={"restart_factor": False}), snapshot) == (
        1,
    )


def test_a_pinned_job_keeps_its_configuration() -> None:
    snapshot = {
        "gpu_types": [{"name": "a", "count": 2}],
        "jobs": [
            {"id": "p", "elastic": {"pinned": True, "current": {"gpu_type": "a", "gpus": 1},
             "configurations": [{"gpu_type": "a", "gpus": 1, "goodput": 1.0},
                                {"gpu_type": "a", "gpus": 2, "goodput": 5.0}]}},
            {"id": "q", "elastic": {"configurations": [
                {"gpu_type": "a", "gpus": 1, "goodput": 1.0},
                {"gpu_type": "a", "gpus": 2, "goodput": 1.5}]}},
        ],
    }  # fmt: skip
    for policy in ("sia", "elastic_max_goodput"):
        result = solve(snapshot, policy=policy)
        assert _picked(result, snapshot) == (0, 0)


@pytest.mark.parametrize("seed", range(12))
def test_sia_matches_brute_force(seed: int) -> None:
    snapshot = brute.random_snapshot(seed)
    result = solve(snapshot, policy="sia")
    values = [brute.sia_value(snapshot, c) for c in brute.assignments(snapshot)]
    best = brute.best(values, minimize=True)
    assert result.objective == pytest.approx(best, rel=1e-4)  # the policy's 0.01 % gap
    assert brute.sia_value(snapshot, _picked(result, snapshot)) == pytest.approx(
        result.objective, rel=1e-9
    )


@pytest.mark.parametrize("seed", range(12))
def test_max_goodput_matches_brute_force(seed: int) -> None:
    snapshot = brute.random_snapshot(seed)
    result = solve(snapshot, policy="elastic_max_goodput", options={"mip_gap": 0.0})
    best = max(brute.total_goodput(snapshot, c) for c in brute.assignments(snapshot))
    assert result.objective == pytest.approx(best, rel=1e-9)
    assert brute.total_goodput(snapshot, _picked(result, snapshot)) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(12))
def test_ones_matches_brute_force(seed: int) -> None:
    snapshot = brute.random_snapshot(seed, remaining=True)
    result = solve(snapshot, policy="ones", options={"mip_gap": 0.0})
    scored = [brute.ones_value(snapshot, c) for c in brute.assignments(snapshot)]
    most = max(g for g, _ in scored)
    least = min(cost for g, cost in scored if g == most)
    gpus, cost = brute.ones_value(snapshot, _picked(result, snapshot))
    assert gpus == most
    assert cost == pytest.approx(least, rel=1e-6)


def test_merged_classes_answer_as_the_per_job_model() -> None:
    # 30 jobs of three kinds: merged into three classes, the same optimum as unmerged
    kinds = [job["elastic"] for job in TWO_TYPES["jobs"]]
    snapshot = {
        "gpu_types": [{"name": "a", "count": 12}, {"name": "b", "count": 5}],
        "jobs": [{"id": f"j{i}", "elastic": kinds[i % 3]} for i in range(30)],
    }
    for policy in ("sia", "elastic_max_goodput", "ones"):
        merged = solve(snapshot, policy=policy, options={"mip_gap": 0.0})
        alone = solve(snapshot, policy=policy, options={"mip_gap": 0.0, "merge_identical": False})
        assert merged.solver.merged_groups == 3
        assert merged.objective == pytest.approx(alone.objective, rel=1e-9)
        _picked(merged, snapshot)


def test_ones_needs_the_work_left() -> None:
    snapshot = {
        "gpu_types": [{"name": "a", "count": 1}],
        "jobs": [{"id": "q", "elastic": {"configurations": [{"gpu_type": "a", "gpus": 1,
                                                              "goodput": 1.0}]}}],
    }  # fmt: skip
    with pytest.raises(InputError) as caught:
        solve(snapshot, policy="ones")
    assert caught.value.errors[0].loc == ("snapshot", "jobs", 0, "elastic", "remaining")


def test_p_zero_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        solve(TWO_TYPES, policy="sia", options={"p": 0.0})
    assert caught.value.errors[0].loc == ("options", "p")


def test_jobs_that_cannot_run_say_why() -> None:
    snapshot = {
        "gpu_types": [{"name": "a", "count": 2}],
        "jobs": [
            {"id": "wide", "elastic": {"configurations": [{"gpu_type": "a", "gpus": 4,
                                                            "goodput": 1.0}]}},
            {"id": "zero", "elastic": {"configurations": [{"gpu_type": "a", "gpus": 1,
                                                            "goodput": 0.0}]}},
            {"id": "rigid", "throughput": {"a": 1.0}},
        ],
    }  # fmt: skip
    result = solve(snapshot, policy="sia")
    reasons = [job.reason for job in result.jobs]
    assert "more GPUs than its type has" in reasons[0]
    assert "positive goodput" in reasons[1]
    assert "not an elastic job" in reasons[2]


def test_max_min_levels_heterogeneous_time_shares() -> None:
    # p: a → 1, b → 3; q: a → 1, b → 1.5; one GPU of each. q takes s of b and 1 − s of a,
    # p the rest: 1 + 0.5 s = 3 − 2 s at s = 0.8, level 1.4 (worked out by hand).
    snapshot = SHARES
    result = solve(snapshot, policy="elastic_max_min")
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(1.4)
    p, q = result.jobs
    assert p.allocation == pytest.approx({"a": 0.8, "b": 0.2}, abs=1e-6)
    assert q.allocation == pytest.approx({"a": 0.2, "b": 0.8}, abs=1e-6)
    assert p.metrics["normalized_goodput"] == pytest.approx(1.4, abs=1e-6)
    assert q.effective_throughput == pytest.approx(0.2 * 4 + 0.8 * 6, abs=1e-5)
    shares = result.summary["configuration_shares"]
    assert dict(shares["q"]) == pytest.approx({0: 0.2, 1: 0.8}, abs=1e-6)


def test_max_min_pareto_stage_uses_what_the_level_leaves() -> None:
    # z caps the level at 1 (one configuration); the Pareto stage still gives x and y their best
    result = solve(TWO_TYPES, policy="elastic_max_min")
    assert result.objective == pytest.approx(1.0)
    goodput = [job.metrics["normalized_goodput"] for job in result.jobs]
    assert goodput == pytest.approx([3.5, 1.9, 1.0])
    first_only = solve(TWO_TYPES, policy="elastic_max_min", options={"pareto": False})
    assert first_only.objective == pytest.approx(1.0)
    assert sum(j.metrics["normalized_goodput"] for j in first_only.jobs) <= 6.4 + 1e-9


def test_max_min_says_when_its_pareto_stage_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pareto LP that ends without an optimum leaves the max-min LP's answer, and says so."""
    from apportion.solver.backends.base import Solution
    from apportion.solver.context import SolveContext, SolveRequest
    from apportion.solver.status import Termination

    real = SolveContext.solve
    calls: list[int] = []

    def second_fails(ctx: SolveContext, request: SolveRequest) -> Solution:
        calls.append(1)
        if len(calls) == 1:
            return real(ctx, request)
        empty = np.zeros(request.model.num_cols)
        return Solution(Status.NO_SOLUTION, None, empty, "highs", "lp", "Iteration limit reached",
                        termination=Termination.ITERATION_LIMIT)  # fmt: skip

    monkeypatch.setattr(SolveContext, "solve", second_fails)
    result = solve(TWO_TYPES, policy="elastic_max_min")
    monkeypatch.undo()
    first_only = solve(TWO_TYPES, policy="elastic_max_min", options={"pareto": False})
    assert len(calls) == 2
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(1.0)
    (warning,) = [w for w in result.warnings if "Pareto stage" in w]
    assert "no_solution (iteration_limit" in warning
    assert [j.allocation for j in result.jobs] == [j.allocation for j in first_only.jobs]
    assert not [w for w in first_only.warnings if "Pareto stage" in w]


def test_max_min_matches_an_independent_lp() -> None:
    from scipy.optimize import linprog

    snapshot = brute.random_snapshot(5, jobs=5)
    result = solve(snapshot, policy="elastic_max_min", options={"restart_factor": False})
    # variables: every (job, configuration) share, then t; maximize t
    counts = {t["name"]: t["count"] for t in snapshot["gpu_types"]}
    cols = [(j, c) for j, job in enumerate(snapshot["jobs"])
            for c, config in enumerate(job["elastic"]["configurations"])
            if config["gpus"] <= counts[config["gpu_type"]]]  # fmt: skip
    n = len(cols) + 1
    names = [t["name"] for t in snapshot["gpu_types"]]
    a_ub, b_ub = [], []
    for j, job in enumerate(snapshot["jobs"]):
        configs = job["elastic"]["configurations"]
        least = min(c["goodput"] for c in configs if c["gpus"] <= counts[c["gpu_type"]])
        row = np.zeros(n)
        time = np.zeros(n)
        for i, (jj, c) in enumerate(cols):
            if jj == j:
                row[i] = -configs[c]["goodput"] / least
                time[i] = 1.0
        row[-1] = job["weight"]
        a_ub += [row, time]
        b_ub += [0.0, 1.0]
    for k, name in enumerate(names):
        row = np.zeros(n)
        for i, (j, c) in enumerate(cols):
            config = snapshot["jobs"][j]["elastic"]["configurations"][c]
            row[i] = config["gpus"] if config["gpu_type"] == name else 0.0
        a_ub.append(row)
        b_ub.append(snapshot["gpu_types"][k]["count"])
    cost = np.zeros(n)
    cost[-1] = -1.0
    lp = linprog(cost, A_ub=np.array(a_ub), b_ub=b_ub, bounds=[(0, None)] * n, method="highs")
    assert result.objective == pytest.approx(-lp.fun, rel=1e-7)


def _rounding_case() -> dict[str, Any]:
    """Five GPUs; a runs on 1 or 3 (A = 0.806 on 3), b and c on 1 or 2 (A = 0.904 on 2), A = 1
    on one GPU. As computed: a on 3 (0.806 + 1 + 1 = 2.806) beats b and c on 2 (1 + 2 × 0.904 =
    2.808); rounded to two decimals, 2.81 against 2.80: b and c on 2."""

    def job(name: str, gpus: int, a: float) -> dict[str, Any]:
        return {"id": name, "elastic": {"configurations": [
            {"gpu_type": "g", "gpus": 1, "goodput": 1.0},
            {"gpu_type": "g", "gpus": gpus, "goodput": a**-2}]}}  # fmt: skip

    jobs = [job("a", 3, 0.806), job("b", 2, 0.904), job("c", 2, 0.904)]
    return {"gpu_types": [{"name": "g", "count": 5}], "jobs": jobs}


def test_sia_rounds_a_as_sias_policy_when_asked() -> None:
    snapshot = _rounding_case()
    exact = solve(snapshot, policy="sia")
    assert _picked(exact, snapshot) == (1, 0, 0)
    assert exact.objective == pytest.approx(2.806)
    rounded = solve(snapshot, policy="sia", options={"round_decimals": 2})
    assert _picked(rounded, snapshot) == (0, 1, 1)
    assert rounded.objective == pytest.approx(2.80)
    # the power mean is of the goodputs themselves
    assert rounded.summary["power_mean"] == pytest.approx(((1 + 2 * 0.904) / 3) ** -2)
