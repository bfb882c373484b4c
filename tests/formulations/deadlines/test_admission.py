"""Deadline admission (FORMULATIONS §6): hand-solved cases, σ, placement, fallback, and random
instances checked against independent recomputation and brute force."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest

from apportion.formulations.deadlines.lease_plan import greedy_plan
from apportion.formulations.deadlines.problem import lease_problem
from apportion.refdata.chronus import philly_like_snapshot
from apportion.solver import InputError, Status, parse_snapshot
from apportion.solver.arrays import ClusterArrays
from tests.conformance.cases_deadlines import LEASE, cluster, job
from tests.deadline_checks import assert_valid_answer, leases_needed, ru
from tests.deadline_checks import solve_by_value as solve

POLICY = "deadline_admission"


def test_a_guaranteed_job_that_no_longer_fits_falls_back_and_answers_for_everyone() -> None:
    # One node; g1 and g2 were both guaranteed the node for slot 0 (the cluster shrank): only
    # one can keep it. The MILP is infeasible, the greedy packing keeps g1 (least slack, then
    # largest, then snapshot order), reports g2, and still admits n in slot 1 and runs be.
    data = cluster(
        1,
        job("g1", 8, 1, (1, 10), guaranteed=True),
        job("g2", 8, 1, (1, 10), guaranteed=True),
        job("n", 4, 1, (2, 5)),
        {"id": "be", "scale_factor": 4, "remaining_time": 600},
    )
    result = solve(data, policy=POLICY)
    assert result.status is Status.FALLBACK
    assert result.summary["guarantees_broken"] == ["g2"]
    assert "no longer fit" in (result.job("g2").reason or "")
    assert any("g2" in w for w in result.warnings)
    assert result.job("g1").metrics["guaranteed"] and result.job("g1").placement == {"n0": 8}
    assert result.job("n").metrics["guaranteed"] and result.job("n").metrics["slots"] == "1"
    assert result.job("g2").metrics["admission"] == "broken"
    assert_valid_answer(result, data)


def test_a_guarantee_impossible_even_alone_is_reported_and_the_rest_solved_exactly() -> None:
    # g's estimate grew to 3 leases but its deadline leaves 2 slots: broken whatever the others
    # do. a (value 4) and b (value 3) compete for the node's single remaining slot: a wins.
    data = cluster(
        1,
        job("g", 8, 3, (2, 10), guaranteed=True),
        job("a", 8, 1, (1, 4)),
        job("b", 8, 1, (1, 3)),
    )
    result = solve(data, policy=POLICY)
    assert result.status is Status.OPTIMAL and result.objective == 4.0
    assert result.summary["guarantees_broken"] == ["g"]
    assert "even alone" in (result.job("g").reason or "")
    assert "needs 3 leases" in (result.job("g").reason or "")
    assert "displaced" in (result.job("b").reason or "")


def sigma_case(with_waiting_job: bool) -> dict[str, Any]:
    # g needs 1 lease of the node before slot 3: any of slots 0, 1, 2.
    jobs = [job("g", 8, 1, (3, 10), guaranteed=True)]
    if with_waiting_job:
        jobs.append({"id": "be", "scale_factor": 8, "remaining_time": 1200})
    return cluster(1, *jobs)


def test_adaptive_sigma_runs_guaranteed_work_now_when_nobody_waits() -> None:
    result = solve(sigma_case(False), policy=POLICY)
    assert result.summary["sigma"] == 1
    assert result.job("g").metrics["slots"] == "0" and result.job("g").placement == {"n0": 8}


def test_adaptive_sigma_defers_guaranteed_work_when_others_wait() -> None:
    result = solve(sigma_case(True), policy=POLICY)
    assert result.summary["sigma"] == -1
    assert result.job("g").metrics["slots"] == "2" and not result.job("g").metrics["runs_now"]
    assert result.job("be").placement == {"n0": 8} and result.summary["best_effort_started"] == 1


def test_explicit_sigma_overrides_the_adaptive_choice() -> None:
    result = solve(sigma_case(True), policy=POLICY, options={"sigma": 1})
    assert result.job("g").metrics["slots"] == "0"
    assert result.job("be").placement is None
    assert "no room for 8 GPUs" in (result.job("be").reason or "")


def test_guaranteed_jobs_run_on_rounded_up_consolidated_blocks_and_spares_go_by_srtf() -> None:
    # Two nodes, everything due in slot 0. r (3 GPUs reserves 4) and w (10 GPUs reserves 16, both
    # nodes) cannot both be guaranteed (20 > 16): w (value 10) beats r (value 1). w runs on a
    # whole node + 2 GPUs; the other 6 GPUs are lent by shortest remaining time among the rest:
    # s1 and s2 (600 s: 1 + 2 GPUs), then r, s3 and s4 tie at 1,200 s and go in snapshot order:
    # r (3 GPUs) fills the node, nothing idle; s3 and s4 wait.
    data = cluster(
        2,
        job("r", 3, 1, (1, 1)),
        job("w", 10, 1, (1, 10)),
        {"id": "s3", "scale_factor": 4, "remaining_time": 1200},
        {"id": "s2", "scale_factor": 2, "remaining_time": 600},
        {"id": "s4", "scale_factor": 3, "remaining_time": 1200},
        {"id": "s1", "scale_factor": 1, "remaining_time": 600},
    )
    result = solve(data, policy=POLICY)
    assert result.objective == 10.0
    assert result.job("w").placement in ({"n0": 8, "n1": 2}, {"n1": 8, "n0": 2})
    assert result.job("w").metrics["lease_use"] == "reserved"
    ran = {j.id: sum((j.placement or {}).values()) for j in result.jobs}
    assert ran == {"r": 3, "w": 10, "s3": 0, "s2": 2, "s4": 0, "s1": 1}
    assert result.job("r").metrics["lease_use"] == "lent"
    assert "not guaranteed" in (result.job("r").reason or "")
    assert result.summary["idle_gpus"] == 0
    assert_valid_answer(result, data)


def test_checkpoint_overhead_adds_leases() -> None:
    # 2,400 s of work: 2 leases of 1,200 s, but 3 when 300 s of each lease go to checkpointing
    # (900 s of progress per lease). With a deadline of 2 slots the job then cannot be admitted.
    data = cluster(1, job("a", 8, 2, (2, 10)))
    assert solve(data, policy=POLICY).job("a").metrics["guaranteed"]
    late = solve(data, policy=POLICY, options={"overhead_seconds": 300})
    assert late.job("a").metrics["leases_needed"] == 3
    assert not late.job("a").metrics["guaranteed"]
    assert "needs 3 leases" in (late.job("a").reason or "")


def test_a_job_longer_than_the_horizon_is_told_to_raise_it() -> None:
    data = cluster(1, job("long", 1, 5, (10, 10)))
    result = solve(data, policy=POLICY, options={"horizon_slots": 4})
    assert "beyond the planning horizon of 4 slots" in (result.job("long").reason or "")
    assert solve(data, policy=POLICY).job("long").metrics["guaranteed"]


def test_bad_policy_options_name_the_option() -> None:
    with pytest.raises(InputError) as caught:
        solve(sigma_case(False), policy=POLICY, options={"sigma": 0.5})
    assert caught.value.errors[0].loc[:2] == ("options", "sigma")
    with pytest.raises(InputError) as caught:
        solve(sigma_case(False), policy=POLICY, options={"overhead_seconds": 1200})
    assert "shorter than the lease" in caught.value.errors[0].msg


def test_a_time_limited_milp_returns_its_incumbent_with_the_gap() -> None:
    """A 0.3 s limit on 100 SLO jobs with no gap allowed: the MILP's incumbent with its gap
    (`feasible`; with no gap when the limit came before the MILP's first bound, as it does on a
    loaded machine), or the greedy packing when the MILP gave nothing (`fallback`, saying so).
    Each outcome is checked for what it claims, and every answer keeps the guarantees it
    gives."""
    data = philly_like_snapshot(nodes=30, slo_jobs=100, best_effort_jobs=50, seed=0)
    result = solve(data, options={"time_limit": 0.3, "mip_gap": 0.0})
    assert result.status in (Status.OPTIMAL, Status.FEASIBLE, Status.FALLBACK)
    assert result.objective >= result.summary["value_admitted_greedy"]
    gap = result.solver.mip_gap
    if result.status is Status.FALLBACK:
        assert result.summary["admission"] == "greedy fallback"
        assert any(w.startswith("lease MILP") for w in result.warnings)
    elif gap is not None and math.isfinite(gap):
        assert result.summary["admission"] == "milp"
        assert result.summary["mip_gap"] == gap
        assert (gap > 0) == (result.status is Status.FEASIBLE)
    else:  # stopped before the MILP had a bound: its incumbent (the start), no gap to give
        assert result.summary["admission"] == "milp"
        assert result.status is Status.FEASIBLE and result.summary["mip_gap"] is None
    assert_valid_answer(result, data)


# ---- random instances -------------------------------------------------------------------


def random_instance(rng: np.random.Generator, nodes: int, jobs: int, slots: int) -> dict[str, Any]:
    out = []
    for j in range(jobs):
        gpus = int(rng.choice([1, 2, 3, 4, 6, 8, 10, 16]))
        need = int(rng.integers(1, 3))
        first = int(rng.integers(1, slots + 1))
        options = [(first, 10.0)]
        if rng.random() < 0.5 and first < slots:
            options.append((int(rng.integers(first + 1, slots + 1)), float(rng.integers(1, 10))))
        out.append(job(f"j{j}", min(gpus, 8 * nodes), need, *options))
    out.append({"id": "be", "scale_factor": 2, "remaining_time": 300})
    return cluster(nodes, *out)


def brute_force_value(data: dict[str, Any]) -> float:
    """Best value over every choice of option and slot set per job (independent of the MILP)."""
    per_node, capacity = 8, 8 * len(data["nodes"])
    choices = []
    for item in data["jobs"]:
        if "deadlines" not in item:
            continue
        need, size = leases_needed(item, LEASE), ru(item["scale_factor"], per_node)
        mine: list[tuple[float, int, tuple[int, ...]]] = [(0.0, 0, ())]
        for option in item["deadlines"]:
            usable = math.floor(option["time"] / LEASE)
            for slots in itertools.combinations(range(usable), need):
                mine.append((option["value"], size, slots))
        choices.append(mine)
    best = 0.0
    for combo in itertools.product(*choices):
        used: dict[int, int] = {}
        for _, size, slots in combo:
            for t in slots:
                used[t] = used.get(t, 0) + size
        if all(v <= capacity for v in used.values()):
            best = max(best, sum(c[0] for c in combo))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_tiny_random_instances_reach_the_brute_force_optimum(seed: int) -> None:
    data = random_instance(np.random.default_rng(seed), nodes=1, jobs=4, slots=3)
    result = solve(data, policy=POLICY, options={"mip_gap": 0.0})
    assert result.status is Status.OPTIMAL
    assert result.objective == brute_force_value(data)
    assert_valid_answer(result, data)


@pytest.mark.parametrize("seed", range(6))
def test_random_answers_are_valid_and_keep_earlier_guarantees(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    data = random_instance(rng, nodes=3, jobs=25, slots=8)
    first = solve(data, policy=POLICY)
    assert_valid_answer(first, data)
    # Next lease: everything admitted is now guaranteed; whatever ran lost a lease of work.
    later = {**data, "now": LEASE, "jobs": []}
    for item in data["jobs"]:
        res = first.job(item["id"])
        left = item["remaining_time"] - (LEASE if res.metrics["runs_now"] else 0)
        if left > 0:
            later["jobs"].append(
                {
                    **item,
                    "remaining_time": left,
                    **({"guaranteed": True} if res.metrics.get("guaranteed") else {}),
                }
            )
    second = solve(later, policy=POLICY)
    assert second.status is not Status.FALLBACK and not second.summary["guarantees_broken"]
    assert_valid_answer(second, later)


@pytest.mark.parametrize("seed", range(6))
def test_the_greedy_fallback_packing_is_feasible(seed: int) -> None:
    data = philly_like_snapshot(nodes=10, slo_jobs=60, best_effort_jobs=0, seed=seed)
    snap = parse_snapshot(data)
    problem = lease_problem(snap, 0.0, 288, ClusterArrays.from_snapshot(snap).throughput)
    jobs = np.flatnonzero(problem.is_slo)
    for by_density in (False, True):
        plan, lost = greedy_plan(problem, jobs, by_density)
        reserved = np.zeros(problem.horizon, dtype=int)
        for j in np.flatnonzero(plan.admitted):
            slots = np.flatnonzero(plan.slots[j])
            item = data["jobs"][j]
            deadline = snap.jobs[j].deadlines[problem.row_option[plan.row[j]]].time  # type: ignore[index]
            assert slots.size == leases_needed(item, LEASE)
            assert slots.max(initial=-1) < math.floor(deadline / LEASE)
            reserved[slots] += ru(item["scale_factor"], 8)
        assert (reserved <= 80).all()
        kept = plan.admitted | np.isin(np.arange(problem.num_jobs), lost)
        assert kept[problem.guaranteed].all(), "a guarantee vanished without being reported"


def test_sigma_moves_work_without_changing_what_is_admitted() -> None:
    data = random_instance(np.random.default_rng(7), nodes=2, jobs=20, slots=6)
    answers = {
        sigma: solve(data, policy=POLICY, options={"sigma": sigma, "mip_gap": 0.0})
        for sigma in (-1, 0, 1)
    }
    assert len({a.objective for a in answers.values()}) == 1
    for answer in answers.values():
        assert_valid_answer(answer, data)
    # GPUs reserved in slot 0: σ = +1 fills it, σ = −1 empties it, from whatever the plan
    # (σ = 0) had; which optimal plan the solver returns decides how far each can move.
    now = {sigma: a.summary["reserved_gpus_per_slot"][0] for sigma, a in answers.items()}
    assert now[-1] <= now[0] <= now[1] and now[-1] < now[1], now


def test_when_guarantees_must_break_as_few_as_possible_break() -> None:
    # Two 4-GPU nodes, one lease before every deadline: `big` (8 GPUs) or `a` and `b` (4 each)
    # can keep their guarantee, not all three. Keeping a and b breaks one and is worth 20;
    # keeping big breaks two and is worth 10.
    data = {
        "gpu_types": [{"name": "v100", "count": 8}],
        "nodes": [{"id": "n0", "gpus": 4}, {"id": "n1", "gpus": 4}],
        "lease_seconds": 100,
        "now": 0,
        "jobs": [
            {
                "id": name,
                "scale_factor": gpus,
                "remaining_time": 100,
                "deadlines": [{"time": 100, "value": 10}],
                "guaranteed": True,
            }
            for name, gpus in (("big", 8), ("a", 4), ("b", 4))
        ],
    }
    result = solve(data, policy=POLICY)
    assert result.status is Status.FALLBACK
    assert result.summary["guarantees_broken"] == ["big"]
    assert result.objective == 20.0
    assert result.job("a").metrics["runs_now"] and result.job("b").metrics["runs_now"]


def brute_force_fewest_broken(data: dict[str, Any]) -> tuple[int, float]:
    """(guarantees broken, value) of the best plan: fewest broken first, then most value."""
    per_node, capacity = 8, 8 * len(data["nodes"])
    choices = []
    for item in data["jobs"]:
        need, size = leases_needed(item, LEASE), ru(item["scale_factor"], per_node)
        skip = 1 if item.get("guaranteed") else 0
        mine: list[tuple[float, int, int, tuple[int, ...]]] = [(0.0, skip, 0, ())]
        for option in item["deadlines"]:
            for slots in itertools.combinations(range(math.floor(option["time"] / LEASE)), need):
                mine.append((option["value"], 0, size, slots))
        choices.append(mine)
    best = (len(choices) + 1, 0.0)
    for combo in itertools.product(*choices):
        used: dict[int, int] = {}
        for _, _, size, slots in combo:
            for t in slots:
                used[t] = used.get(t, 0) + size
        if all(v <= capacity for v in used.values()):
            key = (sum(c[1] for c in combo), -sum(c[0] for c in combo))
            best = min(best, (key[0], key[1]))
    return best[0], -best[1]


@pytest.mark.parametrize("seed", range(12))
def test_broken_guarantees_are_fewest_then_most_valuable(seed: int) -> None:
    """Tiny over-committed instances (every job guaranteed or not, more work than the node
    holds): the answer matches brute force in both keys."""
    rng = np.random.default_rng(1000 + seed)
    jobs = []
    for j in range(4):
        gpus = int(rng.choice([2, 4, 6, 8]))
        first = int(rng.integers(1, 3))
        jobs.append(job(f"j{j}", gpus, 1, (first, float(rng.integers(1, 10))), guaranteed=j < 3))
    data = cluster(1, *jobs)
    broken, value = brute_force_fewest_broken(data)
    result = solve(data, policy=POLICY, options={"mip_gap": 0.0})
    assert len(result.summary["guarantees_broken"]) == broken
    assert result.objective == pytest.approx(value)
    assert_valid_answer(result, data)
    if broken:
        assert result.status is Status.FALLBACK
