"""Large instances end optimal when they are (issue 33): 100,000 distinct jobs, the LPs in the
block interior point, certified on the model; checked on the returned allocation against the
rows and against the ceiling level, an upper bound computed without any solver. Contended
clusters end optimal by the market's prices and the crossover (issue 45)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.formulations.fairness.share_input import Entities, share_input
from apportion.formulations.fairness.share_lp import LevelState, build_share_lp
from apportion.refdata.synthetic import contended_columns, random_snapshot
from apportion.solver import Status, solve
from apportion.solver.arrays import ClusterArrays
from apportion.solver.backends import SolveSettings, get_backend
from apportion.solver.backends.base import LpMethod
from apportion.solver.backends.blocks.master import TOLERANCES
from apportion.solver.snapshot import parse_snapshot


def ceiling_bound(snapshot: dict[str, object]) -> float:
    """min_j c_j / w_j: each job alone on its types (fractional knapsack by normalized
    throughput, each type up to min(1, N_k / s_j)) — no allocation can give the minimum more."""
    gpus = {g["name"]: g["count"] for g in snapshot["gpu_types"]}  # type: ignore[index]
    total = sum(gpus.values())
    best = np.inf
    for job in snapshot["jobs"]:  # type: ignore[attr-defined]
        s, w = job["scale_factor"], job["weight"]
        t = {k: v for k, v in job["throughput"].items() if s <= gpus[k]}
        prop = sum(v * gpus[k] for k, v in job["throughput"].items()) / total
        left, reach = 1.0, 0.0
        for k, v in sorted(t.items(), key=lambda kv: -kv[1]):
            time = min(left, min(1.0, gpus[k] / s))
            reach += s * v / prop * time
            left -= time
        best = min(best, reach / w)
    return float(best)


@pytest.mark.parametrize(("types", "seed"), [(3, 1), (8, 2)])
def test_large_random_instances_end_optimal(types: int, seed: int) -> None:
    snapshot = random_snapshot(100_000, types, seed=seed)
    result = solve(snapshot, policy="max_min_fairness")
    assert result.status is Status.OPTIMAL, (result.solver.detail, result.warnings)
    assert "blocks" in result.solver.backend
    names = [g["name"] for g in snapshot["gpu_types"]]
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], float)
    x = np.array([[job.allocation.get(n, 0.0) for n in names] for job in result.jobs])
    scale = np.array([j["scale_factor"] for j in snapshot["jobs"]], float)
    assert (x >= 0).all() and (x.sum(axis=1) <= 1 + 1e-9).all()
    assert (scale @ x <= counts * (1 + 1e-9)).all()
    shares = np.array([job.normalized_share for job in result.jobs])
    assert result.objective == pytest.approx(shares.min(), rel=1e-12)
    bound = ceiling_bound(snapshot)
    assert result.objective <= bound * (1 + 1e-9)
    if result.summary["pareto"] == "ceiling":
        # The ceiling was reached: the floors sit 1e-7 below it, and no job is under them.
        assert result.objective >= bound * (1 - 1e-7) * (1 - 1e-9)


def test_contended_clusters_end_optimal_by_the_market_with_every_job_at_the_level() -> None:
    """A contended, heterogeneous cluster: the level LP goes to the market's prices and the
    crossover (no interior point, no general solver), and the vertex's duals prove every job
    held at the level in every optimum, so no Pareto LP runs. Checked on the allocation: the
    rows hold, every job's share is the level, and the level is HiGHS's optimum of the same
    LP (simplex, tolerances 1e-10)."""
    snapshot = contended_columns(2_000, 8, seed=3)
    result = solve(snapshot, policy="max_min_fairness")
    assert result.status is Status.OPTIMAL, (result.solver.detail, result.warnings)
    assert result.solver.backend == "blocks" and result.solver.solver == "vertex"
    assert result.summary["pareto"] == "every job at the level"
    jobs, names = snapshot["jobs"], [g["name"] for g in snapshot["gpu_types"]]
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], float)
    x = np.array([[job.allocation.get(n, 0.0) for n in names] for job in result.jobs])
    assert (x >= -1e-12).all() and (x.sum(axis=1) <= 1 + 1e-9).all()
    assert (jobs["scale_factor"] @ x <= counts * (1 + 1e-9)).all()
    shares = np.array([job.normalized_share for job in result.jobs])  # s·eff / (w·prop)
    assert shares == pytest.approx(np.full(shares.size, result.objective), rel=1e-8)
    assert result.objective == pytest.approx(highs_level(snapshot), rel=1e-9)


def highs_level(snapshot: dict[str, Any]) -> float:
    snap = parse_snapshot(snapshot)
    problem = ClusterArrays.from_snapshot(snap)
    prepared = share_input(
        snap, problem, problem.throughput, Entities.single(problem.num_jobs), merge=False
    )
    s = prepared.structure
    assert s is not None
    state = LevelState(
        s.weight.copy(), np.zeros(s.size), np.ones(1), np.ones(1, bool), np.zeros(s.size)
    )
    model, blocks = build_share_lp(s, state, single=True)
    tight = SolveSettings(lp_method=LpMethod.SIMPLEX, tuning={"highs": TOLERANCES})
    solution = get_backend("highs").solve(model.compile(), tight)
    assert solution.status is Status.OPTIMAL
    return float(blocks.level_value(solution))
