"""Max-min fairness (FORMULATIONS §1) as independent dense LPs for scipy's linprog, built
straight from the snapshot dict without any of apportion's code: as written, and in each job's
own units (exact whatever the magnitudes)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog


def _dense(snapshot: dict[str, Any]) -> tuple[np.ndarray, ...]:
    """(N_k, T_jk, s_j, w_j) straight from the snapshot dict."""
    names = [g["name"] for g in snapshot["gpu_types"]]
    n = np.array([g["count"] for g in snapshot["gpu_types"]], dtype=float)
    jobs = snapshot["jobs"]
    t = np.array([[j.get("throughput", {}).get(k, 0.0) for k in names] for j in jobs])
    s = np.array([j.get("scale_factor", 1) for j in jobs], dtype=float)
    w = np.array([j.get("weight", 1.0) for j in jobs], dtype=float)
    return n, t, s, w


def linprog_max_min(snapshot: dict[str, Any], aware: bool = True) -> float:
    """FORMULATIONS §1 written out densely, without any of apportion's code."""
    n, t, s, w = _dense(snapshot)
    usable = (t > 0) & (s[:, None] <= n[None, :])
    if not aware:
        t = (t > 0).astype(float)
    keep = usable.any(axis=1)
    t, s, w, usable = t[keep], s[keep], w[keep], usable[keep]
    m, k = t.shape
    prop = t @ n / n.sum()
    nv = m * k + 1  # x (row-major) then the level
    a_ub, b_ub = [], []
    for j in range(m):
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = -s[j] * t[j] / (w[j] * prop[j])
        row[-1] = 1.0
        a_ub.append(row), b_ub.append(0.0)
        row = np.zeros(nv)
        row[j * k : (j + 1) * k] = 1.0
        a_ub.append(row), b_ub.append(1.0)
    for g in range(k):
        row = np.zeros(nv)
        row[g : m * k : k] = s
        a_ub.append(row), b_ub.append(n[g])
    bounds = [(0, 1 if usable[j, g] else 0) for j in range(m) for g in range(k)] + [(0, None)]
    c = np.zeros(nv)
    c[-1] = -1.0
    res = linprog(c, A_ub=np.array(a_ub), b_ub=b_ub, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun)


def scaled_max_min(snapshot: dict[str, Any]) -> float:
    """FORMULATIONS §1 with each job's variables in units of what it needs: Z_jk = X_jk a_j / t0
    with a_j its best share per unit of time and t0 = min_j a_j (no level can pass it), so every
    share row reads Σ_k (a_jk / a_j) Z_jk ≥ τ with τ = t / t0 of order 1, whatever the
    magnitudes. Written apart from apportion's own scaling."""
    n, t, s, w = _dense(snapshot)
    prop = t @ n / n.sum()
    usable = (t > 0) & (s[:, None] <= n[None, :])
    keep = usable.any(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # prop = 0: the job runs nowhere
        a = np.where(usable, s[:, None] * t / (w * prop)[:, None], 0.0)[keep]
    s = s[keep]
    best = a.max(axis=1)
    t0 = float(best.min())
    m, k = a.shape
    unit = t0 / best  # X_jk = unit_j · Z_jk
    rows, rhs = [], []
    for j in range(m):
        share = np.zeros(m * k + 1)
        share[j * k : (j + 1) * k] = -a[j] / best[j]
        share[-1] = 1.0
        time = np.zeros(m * k + 1)
        time[j * k : (j + 1) * k] = unit[j]
        rows += [share, time]
        rhs += [0.0, 1.0]
    for g in range(k):
        cap = np.zeros(m * k + 1)
        cap[g : m * k : k] = s * unit
        rows.append(cap)
        rhs.append(n[g])
    bounds = [(0, None if a[j, g] > 0 else 0) for j in range(m) for g in range(k)] + [(0, None)]
    cost = np.zeros(m * k + 1)
    cost[-1] = -1.0
    res = linprog(cost, A_ub=np.array(rows), b_ub=rhs, bounds=bounds, method="highs")
    assert res.status == 0
    return float(-res.fun) * t0
