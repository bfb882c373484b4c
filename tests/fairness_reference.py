"""Independent references for the share policies, built from the snapshot with dense numpy and
scipy's linprog (no code shared with the solver): per-job shares from a returned result, every
constraint with pairs, the leximin test, and a slow water filling with one LP per candidate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult, linprog

from apportion.solver import SolveResult

TOL = 1e-7


class Instance:
    """The snapshot as dense arrays, with one column per (job, type) and per (pair, type)."""

    def __init__(self, snapshot: dict[str, Any], space_sharing: bool = False) -> None:
        self.names = [g["name"] for g in snapshot["gpu_types"]]
        self.count = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
        jobs = snapshot["jobs"]
        self.ids = [job["id"] for job in jobs]
        self.t = np.array([[job["throughput"].get(n, 0.0) for n in self.names] for job in jobs])
        self.s = np.array([job.get("scale_factor", 1) for job in jobs], dtype=float)
        self.w = np.array([job.get("weight", 1.0) for job in jobs], dtype=float)
        self.prop = self.t @ self.count / self.count.sum()
        index = {job_id: j for j, job_id in enumerate(self.ids)}
        self.pairs = [
            (index[p["a"]], index[p["b"]], p["throughput"])
            for p in (snapshot.get("job_pairs") or [])
            if space_sharing and self.s[index[p["a"]]] == self.s[index[p["b"]]]
        ]
        m, k = self.t.shape
        # Columns: (kind, i, k) with kind "x" (job i alone) or "y" (pair i).
        self.columns = [("x", j, g) for j in range(m) for g in range(k)]
        self.columns += [("y", p, g) for p in range(len(self.pairs)) for g in range(k)]
        self.value = np.zeros((m, len(self.columns)))  # s_j eff_j / prop_j per column
        self.time = np.zeros((m, len(self.columns)))
        self.capacity = np.zeros((k, len(self.columns)))
        self.bounds = []
        for c, (kind, i, g) in enumerate(self.columns):
            if kind == "x":
                ok = self.t[i, g] > 0 and self.s[i] <= self.count[g] and self.prop[i] > 0
                self.value[i, c] = self.s[i] * self.t[i, g] / self.prop[i] if ok else 0.0
                self.time[i, c] = 1.0
                self.capacity[g, c] = self.s[i]
            else:
                a, b, per = self.pairs[i]
                ta, tb = per.get(self.names[g], (0.0, 0.0))
                ok = (ta > 0 or tb > 0) and self.s[a] <= self.count[g] and self.prop[a] > 0
                ok = ok and self.prop[b] > 0
                if ok:
                    self.value[a, c] += self.s[a] * ta / self.prop[a]
                    self.value[b, c] += self.s[b] * tb / self.prop[b]
                self.time[a, c] = self.time[b, c] = 1.0
                self.capacity[g, c] = self.s[a]
            self.bounds.append((0.0, None if ok else 0.0))
        self.active = self.prop > 0
        self.active &= ((self.t > 0) & (self.s[:, None] <= self.count[None, :])).any(axis=1)

    def maximize(self, objective: np.ndarray, floors: dict[int, float]) -> float:
        """max objective·v over the allocations with v_l ≥ floors[l]."""
        rows = [self.time, self.capacity]
        rhs = [np.ones(len(self.ids)), self.count]
        for j, floor in floors.items():
            rows.append(-self.value[j][None, :])
            rhs.append(np.array([-floor]))
        result = robust_linprog(
            -(objective @ self.value), np.vstack(rows), np.concatenate(rhs), self.bounds
        )
        return float(-result.fun)


def result_columns(result: SolveResult, inst: Instance) -> np.ndarray:
    """The result's allocation (alone and in pairs) as a vector over `inst.columns`."""
    out = np.zeros(len(inst.columns))
    position = {key: c for c, key in enumerate(inst.columns)}
    for j, job in enumerate(result.jobs):
        assert job.id == inst.ids[j], "result jobs must keep the snapshot's order"
        for gpu, value in job.allocation.items():
            out[position[("x", j, inst.names.index(gpu))]] = value
    pair_index = {(inst.ids[a], inst.ids[b]): p for p, (a, b, _) in enumerate(inst.pairs)}
    pair_index.update({(inst.ids[b], inst.ids[a]): p for p, (a, b, _) in enumerate(inst.pairs)})
    for entry in result.summary.get("pair_allocations", []):
        p = pair_index[(entry["a"], entry["b"])]
        for gpu, value in entry["allocation"].items():
            out[position[("y", p, inst.names.index(gpu))]] += value
    return out


def check_result(result: SolveResult, inst: Instance) -> np.ndarray:
    """Every constraint holds on the returned answer and the reported throughputs match it;
    returns each job's normalized throughput v_j = s_j eff_j / prop_j, recomputed."""
    x = result_columns(result, inst)
    assert (x >= -TOL).all(), "negative time fraction"
    for c, (_, hi) in enumerate(inst.bounds):
        assert hi is None or x[c] <= hi + TOL, f"column {inst.columns[c]} used where it cannot run"
    assert (inst.time @ x <= 1 + TOL).all(), "a job runs more than all the time"
    assert (inst.capacity @ x <= inst.count + TOL).all(), "a GPU type is over-subscribed"
    v = inst.value @ x
    eff = np.array([job.effective_throughput for job in result.jobs])
    expected = np.divide(v * inst.prop, inst.s, out=np.zeros_like(v), where=inst.active)
    np.testing.assert_allclose(eff, expected, rtol=1e-7, atol=1e-9)
    used = np.array([g.used for g in result.gpu_types])
    np.testing.assert_allclose(used, inst.capacity @ x, rtol=1e-7, atol=1e-9)
    return v


def leximin_gap(inst: Instance, u: np.ndarray, weight: np.ndarray) -> float:
    """Largest relative rise of some u_j = v_j / weight_j that keeps every job at an equal or
    lower level at its value (0 for a leximin-optimal u): one LP per job."""
    worst = 0.0
    jobs = np.flatnonzero(inst.active)
    for j in jobs:
        floors = {
            int(i): u[i] * weight[i] * (1 - 1e-9)
            for i in jobs
            if i != j and u[i] <= u[j] * (1 + 1e-6) + 1e-9
        }
        best = inst.maximize(np.eye(len(u))[j] / weight[j], floors)
        worst = max(worst, (best - u[j]) / max(u[j], 1e-9))
    return worst


WeightRule = Callable[[np.ndarray], np.ndarray]  # active jobs -> effective weight per job


def reference_water_filling(inst: Instance, rule: WeightRule) -> np.ndarray:
    """Water filling the slow way (FORMULATIONS §1a–1b): each level LP maximizes the common
    increment Δ with v_i ≥ L_i + weight_i Δ for active jobs, where L_i is what job i already
    reached (0 at first), and frozen jobs keep theirs; then one LP per candidate job asks
    whether it can exceed its new value while every other job keeps its own. Returns v per job."""
    active = inst.active.copy()
    reached = np.zeros(active.size)
    frozen: dict[int, float] = {}
    while active.any():
        weight = rule(active)
        step = _level(inst, active, weight, reached, frozen)
        reached = np.where(active, reached + weight * step, reached)
        floors = {**frozen, **{int(i): reached[i] for i in np.flatnonzero(active)}}
        relaxed = {i: f * (1 - 1e-9) for i, f in floors.items()}
        # A rise within what the relaxed floors free (1e-9 of the largest) is none.
        noise = 1e-8 * max(max(floors.values(), default=0.0), 1e-300)
        for j in np.flatnonzero(active & (weight > 0)):
            best = inst.maximize(np.eye(len(active))[j], relaxed)
            if best <= floors[int(j)] * (1 + 1e-7) + max(noise, 1e-12):
                frozen[int(j)] = floors[int(j)]
        assert active[list(frozen)].any(), "the reference made no progress"
        active[list(frozen)] = False
    v = np.zeros(len(active))
    for j, value in frozen.items():
        v[j] = value
    return v


def _level(
    inst: Instance,
    active: np.ndarray,
    weight: np.ndarray,
    reached: np.ndarray,
    frozen: dict[int, float],
) -> float:
    """max Δ with v_l ≥ reached_l + weight_l Δ for active jobs and frozen ones kept
    (variables: x, Δ)."""
    n = len(inst.columns)
    rows = [np.hstack([inst.time, np.zeros((len(active), 1))])]
    rows.append(np.hstack([inst.capacity, np.zeros((len(inst.count), 1))]))
    rhs = [np.ones(len(active)), inst.count]
    for i in np.flatnonzero(active):
        rows.append(np.hstack([-inst.value[i], [weight[i]]])[None, :])
        rhs.append(np.array([-reached[i] * (1 - 1e-9)]))
    for i, value in frozen.items():
        rows.append(np.hstack([-inst.value[i], [0.0]])[None, :])
        rhs.append(np.array([-value * (1 - 1e-9)]))
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    result = robust_linprog(cost, np.vstack(rows), np.concatenate(rhs), [*inst.bounds, (0, None)])
    return float(result.x[-1])


def robust_linprog(
    cost: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray, bounds: list[Any]
) -> OptimizeResult:
    """scipy's HiGHS, by its dual simplex, then its interior point (for at most 10 s): on
    badly scaled LPs (rows 1e7 apart) one may end "Unknown" where the other solves."""
    for method in ("highs-ds", "highs-ipm"):
        options = {"time_limit": 10.0}
        result = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method=method, options=options)
        if result.status == 0:
            return result
    raise AssertionError(result.message)
