"""Fitting the throughput model of `goodput` to measured step times (FORMULATIONS §9a), as Pollux
and Sia fit it from the configurations a job has run in.

Each observation is one configuration (N nodes, R replicas, micro-batch b) with its measured step
time and all-reduce (sync) time; the compute time of a micro-batch is their difference. The fit
minimizes

    RMSE(log T_c(b), log compute) + RMSE(log T_s(N, R, b), log step)
        + 1e-3·(γ − 1)² + 1e-2·((β_n/α_n)² + (β_r/α_r)²)

over α, β ≥ 1e-8 and 1 ≤ γ ≤ 10 (L-BFGS-B with the exact gradient, from α, β = 0.1, 0.01 and
γ = 1.001). Parameters the
data cannot support are pinned, as Pollux pins them: with one micro-batch size, α_c is half the
mean compute time; without a multi-node observation α_n, β_n stay at their floor (and are then
raised to at least 1.1·α_r, 1.1·β_r, the inter-node link being no faster than the intra-node
one); without a single-node multi-GPU observation α_r, β_r stay at their floor; without more than
two replicas β_n and β_r do.
"""

from __future__ import annotations

from functools import cache, lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from threadpoolctl import ThreadpoolController

from apportion.formulations.elastic.goodput import EPSILON, PerfParams, compute_time, network_time
from apportion.solver.arraytypes import FloatArray

FLOOR = 1e-8
START = np.array([1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3])
LOWER = np.array([FLOOR] * 6 + [1.0])
UPPER = np.array([np.inf] * 6 + [10.0])
ALPHA_C, BETA_C, ALPHA_N, BETA_N, ALPHA_R, BETA_R, GAMMA = range(7)
#: Relative reduction at which the fit stops. Sia stops at 1e-5 for speed, which can leave the fit
#: far from its minimum (docs/FORMULATIONS.md §9a).
TOLERANCE = 1e-8


def objective(
    values: FloatArray,
    nodes: FloatArray,
    replicas: FloatArray,
    local_batch: FloatArray,
    compute: FloatArray,
    step: FloatArray,
) -> tuple[float, FloatArray]:
    """The fit's loss at parameter vector `values` (see the module), and its gradient."""
    p = PerfParams.from_array(values)
    g = p.gamma
    tc = compute_time(p, local_batch)
    tn = network_time(p, nodes, replicas)
    total = tc**g + tn**g
    log_ts = np.log(total) / g
    e_c, e_s = np.log(tc) - np.log(compute), log_ts - np.log(step)
    err_c, err_s = np.sqrt(np.mean(e_c**2)), np.sqrt(np.mean(e_s**2))
    ratio_n, ratio_r = p.beta_n / p.alpha_n, p.beta_r / p.alpha_r
    loss = err_c + err_s + 1e-3 * (g - 1) ** 2 + 1e-2 * (ratio_n**2 + ratio_r**2)
    # ∂ log T_c / ∂(α_c, β_c); ∂ log T_s through T_c, T_n and γ
    d_tc = np.vstack([np.ones_like(tc), np.asarray(local_batch, dtype=float)])
    inter, intra = nodes > 1, (nodes <= 1) & (replicas > 1)
    spread = np.maximum(replicas - 2, EPSILON)
    d_tn = np.vstack([inter, inter * spread, intra, intra * spread]).astype(float)
    via_c, via_n = tc ** (g - 1) / total, tn ** (g - 1) / total
    d_gamma = -np.log(total) / g**2 + (tc**g * np.log(tc) + tn**g * np.log(tn)) / (g * total)
    d_log_ts = np.vstack([via_c * d_tc, via_n * d_tn, d_gamma])
    grad = np.zeros(7)
    if err_c > 0:
        grad[:2] += (d_tc / tc) @ e_c / (e_c.size * err_c)
    if err_s > 0:
        grad += d_log_ts @ e_s / (e_s.size * err_s)
    grad[GAMMA] += 2e-3 * (g - 1)
    grad[BETA_N] += 2e-2 * ratio_n / p.alpha_n
    grad[ALPHA_N] -= 2e-2 * ratio_n**2 / p.alpha_n
    grad[BETA_R] += 2e-2 * ratio_r / p.alpha_r
    grad[ALPHA_R] -= 2e-2 * ratio_r**2 / p.alpha_r
    return float(loss), grad


def pinned(
    nodes: FloatArray, replicas: FloatArray, local_batch: FloatArray, compute: FloatArray
) -> dict[int, float]:
    """Parameters the observations cannot determine, with the value each is held at."""
    fixed: dict[int, float] = {}
    if np.unique(local_batch).size == 1:
        fixed[ALPHA_C] = float(np.mean(compute) / 2)
    if not np.any(nodes > 1):
        fixed[ALPHA_N] = fixed[BETA_N] = FLOOR
    if not np.any((nodes == 1) & (replicas > 1)):
        fixed[ALPHA_R] = fixed[BETA_R] = FLOOR
    if not np.any(replicas > 2):
        fixed[BETA_N] = fixed[BETA_R] = FLOOR
    return fixed


def fit_perf_params(
    nodes: ArrayLike,
    replicas: ArrayLike,
    local_batch: ArrayLike,
    step_time: ArrayLike,
    sync_time: ArrayLike,
    start: PerfParams | None = None,
    tolerance: float = TOLERANCE,
) -> PerfParams:
    """The throughput model fitted to observed configurations (one value per observation);
    `start` (an earlier fit, when a job adds an observation) only speeds the search up;
    `tolerance` is where the search stops (Sia's simulator: 1e-5)."""
    columns = (nodes, replicas, local_batch, step_time, sync_time)
    # jobs of one model see the same profile, so a simulation refits the same observations often
    seen = tuple(np.asarray(c, dtype=float).tobytes() for c in columns)
    return _fit(seen, start, tolerance)


@lru_cache(maxsize=4096)
def _fit(seen: tuple[bytes, ...], start: PerfParams | None, tolerance: float) -> PerfParams:
    n, r, b, step, sync = (np.frombuffer(c, dtype=float) for c in seen)
    compute = step - sync
    if n.size == 0:
        raise ValueError("no observations to fit")
    if np.any(compute <= 0) or np.any(step <= 0):
        raise ValueError("step times must exceed sync times and be positive")
    fixed = pinned(n, r, b, compute)
    free = np.array([i for i in range(7) if i not in fixed], dtype=np.int64)
    values = START.copy() if start is None else np.clip(start.as_array(), LOWER, UPPER)
    for i, v in fixed.items():
        values[i] = v

    def loss(x: FloatArray) -> tuple[float, FloatArray]:
        full = values.copy()
        full[free] = x
        value, grad = objective(full, n, r, b, compute, step)
        return value, grad[free]

    with _blas().limit(limits=1, user_api="blas"):
        result = minimize(
            loss,
            values[free],
            jac=True,
            method="L-BFGS-B",
            bounds=list(zip(LOWER[free], UPPER[free], strict=True)),
            tol=tolerance,
        )
    values[free] = result.x
    if not np.any(n > 1):
        values[ALPHA_N] = max(values[ALPHA_N], 1.1 * values[ALPHA_R])
        values[BETA_N] = max(values[BETA_N], 1.1 * values[BETA_R])
    return PerfParams.from_array(values)


@cache
def _blas() -> ThreadpoolController:
    """L-BFGS-B's few tiny vectors gain nothing from BLAS threads, and on a loaded machine
    their start-up and spinning cost most of a fit's time."""
    return ThreadpoolController()
