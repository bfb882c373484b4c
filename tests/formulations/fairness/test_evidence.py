"""The share policies' evidence: shadow prices agree with finite differences (add ε GPUs of a
type, re-solve with the normalizers held, compare the objective's change), for the max-min
stage and for the Pareto stage, on every backend that reports duals."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from apportion.formulations.fairness.common import plain_input
from apportion.formulations.fairness.level_solvers import ColdLevels
from apportion.formulations.fairness.max_min import MaxMinFairnessOptions
from apportion.formulations.fairness.pareto import ceiling_level, floored
from apportion.formulations.fairness.run import solve_once
from apportion.formulations.fairness.share_input import ShareInput
from apportion.formulations.fairness.share_lp import LevelState
from apportion.refdata.synthetic import random_snapshot
from apportion.solver import solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import LpMethod
from apportion.solver.context import SolveContext
from apportion.solver.options import SolveOptions
from apportion.solver.snapshot import parse_snapshot
from apportion.solver.status import Status

SEEDS = range(16)
# (backend, relative step, tolerance): an interior point is accurate to ~1e-8, so its
# differences need a longer step.
BACKENDS = [("highs", 1e-5, 1e-4), ("clarabel", 1e-3, 2e-3)]


def oversubscribed(seed: int) -> dict[str, Any]:
    """Random distinct jobs on fewer GPUs than they could use: the max-min LP is solved (the
    ceiling shortcut does not apply) and capacity binds."""
    snapshot = random_snapshot(10 + seed % 5, 2 + seed % 2, seed=seed, gpus_per_type=3)
    for job in snapshot["jobs"]:
        job["scale_factor"] = min(job["scale_factor"], 2)  # no gang exactly as wide as a type
    return snapshot


def prepared(snapshot: dict[str, Any], backend: str) -> tuple[ClusterArrays, ShareInput]:
    snap = parse_snapshot(snapshot)
    problem = ClusterArrays.from_snapshot(snap)
    ctx = SolveContext.for_request(SolveOptions(backend=backend))
    return problem, plain_input(snap, problem, MaxMinFairnessOptions(), ctx)


def max_min_level(
    problem: ClusterArrays, base: ShareInput, k: int, step: float, backend: str
) -> float:
    """t* with N_k moved by `step` and every normalizer (the share rows' gains) held."""
    s = base.structure
    assert s is not None
    capacity = s.capacity.copy()
    capacity[k] += step
    moved = replace(base, structure=replace(s, capacity=capacity))
    ctx = SolveContext.for_request(SolveOptions(backend=backend))
    outcome = solve_once(problem, moved, ctx, pareto=False)
    assert outcome.status is Status.OPTIMAL and outcome.objective is not None
    return outcome.objective


def bracket(center: float, up: float, down: float, step: float) -> tuple[float, float]:
    """The one-sided derivatives (right, left) of a concave value function."""
    return (up - center) / step, (center - down) / step


@pytest.mark.parametrize(("backend", "relative", "tol"), BACKENDS, ids=[b[0] for b in BACKENDS])
def test_max_min_shadow_prices_match_finite_differences(
    backend: str, relative: float, tol: float
) -> None:
    smooth = solved = 0
    for seed in SEEDS:
        snapshot = oversubscribed(seed)
        result = solve(snapshot, explain=True, backend=backend)
        explanation = result.explanation
        assert explanation is not None
        if result.summary["pareto"] == "ceiling":  # the level was computed, not an LP's
            assert explanation.price_stage == "pareto"
            continue
        assert explanation.price_stage == "max-min"
        solved += 1
        problem, base = prepared(snapshot, backend)
        center = max_min_level(problem, base, 0, 0.0, backend)
        assert center == pytest.approx(result.objective, rel=tol)
        for k, gpu in enumerate(explanation.gpu_types):
            step = relative * problem.gpu_count[k]
            right, left = bracket(
                center,
                max_min_level(problem, base, k, step, backend),
                max_min_level(problem, base, k, -step, backend),
                step,
            )
            price = gpu.shadow_price
            assert price is not None
            scale = max(abs(left), abs(right), 1e-3)
            # Any optimal dual of a concave value function lies between its one-sided slopes.
            assert right - tol * scale <= price <= left + tol * scale, (seed, gpu.name)
            if abs(left - right) <= tol * scale:
                smooth += 1
                assert price == pytest.approx(right, rel=tol, abs=tol * scale)
    assert solved >= len(SEEDS) // 2
    assert smooth >= solved  # most prices sit where the value function is smooth


def under_subscribed(seed: int) -> dict[str, Any]:
    """Plenty of GPUs: every job reaches its ceiling, the Pareto LP alone decides."""
    snapshot = random_snapshot(4 + seed % 3, 2, seed=seed, gpus_per_type=40)
    for job in snapshot["jobs"]:
        job["scale_factor"] = 1
    return snapshot


def pareto_total(base: ShareInput, k: int, step: float, level: float) -> float:
    """Σ_g n_g v_g of the Pareto LP with the floors at `level` and N_k moved by `step`."""
    s = base.structure
    assert s is not None
    capacity = s.capacity.copy()
    capacity[k] += step
    moved = replace(s, capacity=capacity)
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    ctx = SolveContext.for_request(SolveOptions(backend="highs"))
    solver = ColdLevels(moved, ctx, LpMethod.SIMPLEX, single=True)
    solution = solver.pareto(floored(state, level))
    assert solution.status is Status.OPTIMAL
    v = solver.blocks.value @ solution.x[: solver.blocks.value.shape[1]]
    return float(s.groups.count @ v)


@pytest.mark.parametrize("seed", range(4))
def test_pareto_stage_prices_match_finite_differences(seed: int) -> None:
    snapshot = under_subscribed(seed)
    # Fewer GPUs of the first type than the jobs want there: its price is positive.
    snapshot["gpu_types"][0]["count"] = 2
    result = solve(snapshot, explain=True, backend="highs")
    explanation = result.explanation
    assert explanation is not None
    problem, base = prepared(snapshot, "highs")
    s = base.structure
    assert s is not None
    stage = explanation.price_stage
    if stage != "pareto":  # the floors did not all fit: the max-min stage prices instead
        assert stage == "max-min"
        return
    level = ceiling_level(s) * (1 - 1e-9)
    center = pareto_total(base, 0, 0.0, level)
    for k, gpu in enumerate(explanation.gpu_types):
        step = 1e-4 * problem.gpu_count[k]
        right = (pareto_total(base, k, step, level) - center) / step
        left = (center - pareto_total(base, k, -step, level)) / step
        price = gpu.prices["pareto"]
        scale = max(abs(left), abs(right), 1e-3)
        assert right - 1e-4 * scale <= price <= left + 1e-4 * scale, gpu.name
