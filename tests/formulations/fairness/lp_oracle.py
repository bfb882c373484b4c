"""Independent LPs for checking the objective policies: scipy's linprog on dense arrays built
straight from the snapshot dict (no code shared with the solver), plus random small snapshots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog


@dataclass(frozen=True)
class Cluster:
    t: np.ndarray  # (m, K) throughput where the job can run (gang fits), 0 elsewhere
    s: np.ndarray
    n: np.ndarray
    price: np.ndarray

    @classmethod
    def of(cls, snapshot: dict[str, Any]) -> Cluster:
        names = [g["name"] for g in snapshot["gpu_types"]]
        n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
        s = np.array([j.get("scale_factor", 1) for j in snapshot["jobs"]], dtype=float)
        t = np.array(
            [[j.get("throughput", {}).get(k, 0.0) for k in names] for j in snapshot["jobs"]]
        )
        t = np.where(s[:, None] <= n[None, :], t, 0.0)
        price = np.array([g.get("price_per_hour", np.nan) for g in snapshot["gpu_types"]], float)
        return cls(t, s, n, price)

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Base constraints A x ≤ b over x = X.ravel() (job-major)."""
        m, k = self.t.shape
        time = np.kron(np.eye(m), np.ones((1, k)))
        capacity = np.kron(self.s[None, :], np.eye(k))
        return np.vstack([time, capacity]), np.concatenate([np.ones(m), self.n])

    def bounds(self) -> list[tuple[float, float]]:
        return [(0.0, 1.0 if v > 0 else 0.0) for v in self.t.ravel()]

    def demand_rows(self, jobs: np.ndarray) -> np.ndarray:
        """−Σ_k T_jk X_jk per job in `jobs` (for rows −eff_j ≤ −d_j)."""
        m, k = self.t.shape
        out = np.zeros((jobs.size, m * k))
        for row, j in enumerate(jobs):
            out[row, j * k : (j + 1) * k] = -self.t[j]
        return out

    def feasible(self, demand: np.ndarray) -> bool:
        """Can every job j get eff_j ≥ demand_j at once?"""
        a, b = self.rows()
        jobs = np.arange(self.t.shape[0])
        a = np.vstack([a, self.demand_rows(jobs)])
        b = np.concatenate([b, -demand])
        res = linprog(np.zeros(a.shape[1]), A_ub=a, b_ub=b, bounds=self.bounds(), method="highs")
        return bool(res.status == 0)

    def feasible_work(self, demand: np.ndarray, slack: float = 0.0) -> bool:
        """`feasible` in work fractions, for demands of any magnitude: W_jk = T_jk X_jk / d_j is
        the part of job j's demand met on k, so each job's row is Σ_k W_jk ≥ 1 with coefficient
        1 and a job needing 1e-10 of its time is as visible as one needing all of it. Time and
        capacity read Σ_k (d_j / T_jk) W_jk ≤ 1 and Σ_j s_j (d_j / T_jk) W_jk ≤ N_k (1 + slack)."""
        m, k = self.t.shape
        need = np.where(self.t > 0, demand[:, None] / np.where(self.t > 0, self.t, 1.0), 0.0)
        work = np.kron(np.eye(m), np.ones((1, k)))
        time = np.kron(np.eye(m), np.ones((1, k))) * need.ravel()[None, :]
        capacity = np.kron(self.s[None, :], np.eye(k)) * need.ravel()[None, :]
        a = np.vstack([-work, time, capacity])
        b = np.concatenate([-np.ones(m), np.ones(m), self.n * (1 + slack)])
        bounds = [(0.0, None if v > 0 else 0.0) for v in self.t.ravel()]
        res = linprog(np.zeros(m * k), A_ub=a, b_ub=b, bounds=bounds, method="highs")
        return bool(res.status == 0)

    def min_cost(self, jobs: np.ndarray, demand: np.ndarray) -> float | None:
        """Cheapest Σ_k p_k Σ_j s_j X_jk meeting `demand` for `jobs` (None if infeasible)."""
        a, b = self.rows()
        a = np.vstack([a, self.demand_rows(jobs)])
        b = np.concatenate([b, -demand])
        cost = (self.s[:, None] * np.nan_to_num(self.price)[None, :]).ravel()
        res = linprog(cost, A_ub=a, b_ub=b, bounds=self.bounds(), method="highs")
        return float(res.fun) if res.status == 0 else None

    def max_linear(self, weight: np.ndarray) -> float:
        a, b = self.rows()
        res = linprog(-weight.ravel(), A_ub=a, b_ub=b, bounds=self.bounds(), method="highs")
        assert res.status == 0
        return float(-res.fun)


def bisect(feasible: Any, low: float, high: float, rel: float = 1e-10) -> float:
    """Smallest value in [low, high] where the monotone predicate `feasible` holds."""
    assert feasible(high) and not feasible(low)
    while high - low > rel * high:
        mid = 0.5 * (low + high)
        low, high = (low, mid) if feasible(mid) else (mid, high)
    return high


def random_snapshot(rng: np.random.Generator, jobs: int, types: int) -> dict[str, Any]:
    """Small random clusters: some zero throughputs, scale factors 1–2, 1–4 GPUs per type."""
    names = [f"g{k}" for k in range(types)]
    out = []
    for j in range(jobs):
        row = rng.uniform(0.5, 4.0, types) * (rng.random(types) > 0.25)
        if not row.any():
            row[rng.integers(types)] = 1.0
        out.append(
            {
                "id": f"j{j}",
                "scale_factor": int(rng.choice([1, 1, 2])),
                "throughput": {n: float(v) for n, v in zip(names, row, strict=True) if v > 0},
                "steps_remaining": float(rng.uniform(10, 100)),
            }
        )
    gpu_types = [
        {"name": n, "count": int(rng.integers(2, 5)), "price_per_hour": float(rng.uniform(0.5, 3))}
        for n in names
    ]
    return {"gpu_types": gpu_types, "jobs": out}
