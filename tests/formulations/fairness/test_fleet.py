"""Large instances end optimal when they are (issue 33): 100,000 distinct jobs, the LPs in the
block interior point, certified on the model; checked on the returned allocation against the
rows and against the ceiling level, an upper bound computed without any solver."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.refdata.synthetic import random_snapshot
from apportion.solver import Status, solve


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
