"""DeepShare's reward as the objective (`objective = "reference"`, FORMULATIONS §7): each
objective against its own brute force, a hand-solved case where they part, the certificate
under a time limit, and what the option refuses."""

from __future__ import annotations

import random
from typing import Any

import pytest

from apportion.refdata import SOURCE
from apportion.refdata.deepshare import read_contention_csv, read_trace, trace_snapshot
from apportion.solver import InputError, Status, solve
from tests.formulations.placement.brute import (
    assert_valid_placement,
    brute_force,
    contention_json,
    random_instance,
    score,
)

SHAPES = {1: [(1, 1)], 2: [(1, 2), (2, 1)], 4: [(1, 4), (2, 2), (4, 1)]}
SEEDS = range(24)


def _random(seed: int) -> tuple[dict[str, Any], dict, float, str, dict[str, Any]]:
    rng = random.Random(seed)
    snapshot, table = random_instance(rng)
    snapshot["contention"] = contention_json(table)
    w1 = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0])
    scope = "all" if seed % 2 else "multi_node"
    options = {
        "w1": w1,
        "contention_scope": scope,
        "shapes": {str(d): [list(s) for s in v] for d, v in SHAPES.items()},
        "mip_gap": 0.0,
    }
    return snapshot, table, w1, scope, options


def _placed(result: Any) -> dict[str, dict[str, int]]:
    return {job.id: job.placement for job in result.jobs if job.placement}


@pytest.mark.parametrize("seed", SEEDS)
def test_each_objective_matches_its_own_brute_force(seed: int) -> None:
    snapshot, table, w1, scope, options = _random(seed)
    for objective in ("linear", "reference"):
        result = solve(
            snapshot, policy="contention_placement", options={**options, "objective": objective}
        )
        assert result.status is Status.OPTIMAL
        placed = assert_valid_placement(result, snapshot, SHAPES)
        best = brute_force(snapshot, table, SHAPES, w1, "worst", scope, objective)
        assert result.objective == pytest.approx(best, abs=1e-9), (seed, objective)
        # The answer's own placement, scored by the oracle, is worth what the policy says.
        assert score(snapshot, table, placed, w1, "worst", scope, objective) == pytest.approx(
            result.objective, abs=1e-9
        )
        if result.summary["solver_objective"] is not None:
            assert result.summary["solver_objective"] == pytest.approx(best, abs=1e-6)


def test_the_objectives_pick_different_placements_on_some_snapshots() -> None:
    """On the same snapshots, the linear objective's optimum scores below the reference optimum
    under the reference objective on some of them (the oracle decides, not the policy)."""
    parted = []
    for seed in SEEDS:
        snapshot, table, w1, scope, options = _random(seed)
        linear = solve(snapshot, policy="contention_placement", options=options)
        as_reference = score(snapshot, table, _placed(linear), w1, "worst", scope, "reference")
        best = brute_force(snapshot, table, SHAPES, w1, "worst", scope, "reference")
        assert as_reference <= best + 1e-9
        if as_reference < best - 1e-9:
            parted.append(seed)
    assert parted


# r (class A, 2 GPUs over n0 and n1) runs; c (the same) waits and can only go next to it, where
# each slows the other down by CS 2. W1 = 0.4, C = 4 GPUs, M = 2 jobs.
#   linear:    c waits: 0.6·2/4 − 0.4·(1 + 1)/2 = −0.1;  c starts: 0.6·4/4 − 0.4·(2 + 2)/2 = −0.2
#   reference: c waits: 0.6·2/4 − 0.4·0 = 0.3;            c starts: 0.6 − 0.4·(½ + ½)/2 = 0.4
PARTING = {
    "nodes": [{"id": "n0", "gpus": 2}, {"id": "n1", "gpus": 2}],
    "jobs": [
        {"id": "r", "workload_class": "A", "placement": {"n0": 1, "n1": 1}},
        {"id": "c", "workload_class": "A", "scale_factor": 2},
    ],
    "contention": {
        "entries": [
            {
                "target": {"workload_class": "A", "gpus": 2, "nodes": 2},
                "co_runner": {"workload_class": "A", "gpus": 2, "nodes": 2},
                "cs": 2.0,
            }
        ]
    },
}


def test_hand_solved_case_where_the_objectives_part() -> None:
    options = {"w1": 0.4, "shapes": {"2": [[2, 1]]}}
    linear = solve(PARTING, policy="contention_placement", options=options)
    reference = solve(
        PARTING, policy="contention_placement", options={**options, "objective": "reference"}
    )
    assert linear.job("c").placement is None
    assert linear.objective == pytest.approx(-0.1)
    assert reference.job("c").placement == {"n0": 1, "n1": 1}
    assert reference.objective == pytest.approx(0.4)
    assert reference.summary["mean_throughput_loss"] == pytest.approx(0.5)
    assert reference.summary["objective_form"] == "reference"
    assert linear.status is Status.OPTIMAL and reference.status is Status.OPTIMAL


def test_a_capped_table_caps_the_loss() -> None:
    # max_cs 1.25: each job loses 1 − 1/1.25 = 0.2, and starting c is worth 0.6 − 0.4·0.2.
    snapshot = {**PARTING, "contention": {**PARTING["contention"], "max_cs": 1.25}}
    options = {"w1": 0.4, "shapes": {"2": [[2, 1]]}, "objective": "reference"}
    result = solve(snapshot, policy="contention_placement", options=options)
    assert result.objective == pytest.approx(0.6 - 0.4 * 0.2)


def test_no_job_holding_gpus_has_no_loss() -> None:
    """The mean over no job is taken as 0: an empty cluster where nothing fits scores 0."""
    snapshot = {
        "nodes": [{"id": "n0", "gpus": 2}],
        "jobs": [{"id": "c", "workload_class": "A", "scale_factor": 4}],
    }
    result = solve(
        snapshot, policy="contention_placement", options={"w1": 0.5, "objective": "reference"}
    )
    assert result.objective == 0.0
    assert result.summary["mean_throughput_loss"] is None


def test_the_reference_objective_needs_the_worst_penalty() -> None:
    options = {"objective": "reference", "penalty": "additive"}
    with pytest.raises(InputError) as exc:
        solve(PARTING, policy="contention_placement", options=options)
    assert exc.value.errors[0].loc == ("options", "objective")


def _trace_snapshot(nodes: int, running: int, candidates: int, seed: int) -> dict[str, Any]:
    trace = read_trace(SOURCE / "deepshare_trace0.json")[20 * seed :]
    snapshot = trace_snapshot(trace, nodes=nodes, running=running, candidates=candidates, seed=seed)
    table = read_contention_csv(SOURCE / "deepshare_shared_thp_ratio.csv").model_dump()
    return {**snapshot, "contention": table}


def test_under_a_time_limit_the_answer_is_optimal_only_with_a_proof() -> None:
    """16 × 8 with 20 candidates: a 0.2 s limit stops the search before its proof on this
    machine's class; the answer is then `feasible` (or the greedy `fallback`) with a warning,
    and its gap is a true bound on the optimum the unlimited solve finds."""
    snapshot = _trace_snapshot(16, 20, 20, 2)
    options = {"w1": 0.5, "objective": "reference"}
    limit = 0.2
    limited = solve(
        snapshot, policy="contention_placement", options={**options, "time_limit": limit}
    )
    best = solve(snapshot, policy="contention_placement", options=options)
    assert best.status is Status.OPTIMAL
    assert limited.objective is not None and best.objective is not None
    assert limited.objective <= best.objective + 1e-9
    # One budget across the start, the pooled rounds and the per-candidate model.
    assert limited.solver.solve_seconds <= limit + 0.3
    if limited.status is Status.OPTIMAL:
        assert limited.objective == pytest.approx(best.objective, rel=1e-4)
        return
    assert limited.status in (Status.FEASIBLE, Status.FALLBACK)
    assert any("not proven optimal" in w for w in limited.warnings)
    gap = limited.solver.mip_gap
    if gap is not None and gap != float("inf"):
        assert best.objective <= limited.objective + gap * abs(limited.objective) + 1e-9
