"""The contended generator: its clusters are contended in max-min's sense and heterogeneous."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from apportion.refdata.synthetic import contended_columns
from apportion.solver import solve


def _arrays(snapshot: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    jobs = snapshot["jobs"]
    throughput = np.column_stack(list(jobs["throughput"].values()))
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    return throughput, jobs["scale_factor"], jobs["weight"], counts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_capacity_rows_set_the_level_below_every_jobs_own_ceiling(seed: int) -> None:
    snapshot = contended_columns(400, 4, seed=seed)
    throughput, scales, weights, counts = _arrays(snapshot)
    prop = throughput @ counts / counts.sum()
    # t̄ from the math (FORMULATIONS §1d): a job alone on its fastest type all the time.
    ceiling = float((scales * throughput.max(axis=1) / prop / weights).min())
    result = solve(snapshot, policy="max_min_fairness")
    assert result.status.value == "optimal"
    assert result.objective is not None
    assert result.objective < 0.999 * ceiling


def test_speed_ups_differ_by_job_and_every_type_fits_the_widest_gang() -> None:
    snapshot = contended_columns(2_000, 8, seed=3)
    throughput, scales, weights, counts = _arrays(snapshot)
    assert set(np.unique(scales)) <= {1, 2, 4, 8} and set(np.unique(weights)) <= {1.0, 2.0}
    assert (counts >= 8).all()
    runs = (throughput > 0).all(axis=1)
    speed_up = throughput[runs, -1] / throughput[runs, 0]
    assert speed_up.min() < 2.0 < speed_up.max()
    assert np.quantile(speed_up, 0.9) > 1.5 * np.quantile(speed_up, 0.1)
    demand = scales.sum()
    assert counts.sum() < demand  # fewer GPUs than the gangs would hold at once
