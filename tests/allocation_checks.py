"""Assertions on a returned allocation, computed from the snapshot alone (not from the solver)."""

from __future__ import annotations

from typing import Any

import numpy as np

from apportion.solver import SolveResult

TOL = 1e-7


def allocation_matrix(result: SolveResult, snapshot: dict[str, Any]) -> np.ndarray:
    names = [g["name"] for g in snapshot["gpu_types"]]
    x = np.zeros((len(snapshot["jobs"]), len(names)))
    for j, job in enumerate(result.jobs):
        assert job.id == snapshot["jobs"][j]["id"], "result jobs must keep the snapshot's order"
        for gpu, value in job.allocation.items():
            x[j, names.index(gpu)] = value
    return x


def assert_feasible_allocation(result: SolveResult, snapshot: dict[str, Any]) -> np.ndarray:
    """Every base constraint of FORMULATIONS §0 holds on the returned X; returns X."""
    x = allocation_matrix(result, snapshot)
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    names = [g["name"] for g in snapshot["gpu_types"]]
    scale = np.array([job.get("scale_factor", 1) for job in snapshot["jobs"]], dtype=float)
    assert (x >= -TOL).all(), "negative time fraction"
    assert (x.sum(axis=1) <= 1 + TOL).all(), "a job runs more than all the time"
    assert (scale @ x <= counts * (1 + TOL) + TOL).all(), "a GPU type is over-subscribed"
    for j, job in enumerate(snapshot["jobs"]):
        for k, name in enumerate(names):
            if x[j, k] > TOL:
                assert job.get("throughput", {}).get(name, 0) > 0, "job placed where it cannot run"
                assert scale[j] <= counts[k], "gang larger than the type's GPU count"
    return x


def normalized_shares(x: np.ndarray, snapshot: dict[str, Any], aware: bool = True) -> np.ndarray:
    """u_j = s_j Σ_k T_jk X_jk / (w_j prop_j), recomputed independently of the solver."""
    names = [g["name"] for g in snapshot["gpu_types"]]
    counts = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    t = np.array(
        [[job.get("throughput", {}).get(n, 0.0) for n in names] for job in snapshot["jobs"]]
    )
    if not aware:
        t = (t > 0).astype(float)
    prop = t @ counts / counts.sum()
    scale = np.array([job.get("scale_factor", 1) for job in snapshot["jobs"]], dtype=float)
    weight = np.array([job.get("weight", 1.0) for job in snapshot["jobs"]], dtype=float)
    eff = (t * x).sum(axis=1)
    return np.divide(scale * eff, weight * prop, out=np.zeros_like(eff), where=prop > 0)
