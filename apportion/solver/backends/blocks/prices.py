"""The max-min level LP's capacity prices from one pass over the jobs per step (FORMULATIONS
§1e), for the crossover (`vertex.py`) to turn into an optimal vertex.

The max-min LP (in the block form: minimize −t; block b's share row a_b·x_b − ω_b t ≥ 0 and
time row Σ x_b ≤ 1; capacity rows Σ_b lv_b x_b ≤ N, one per GPU type) is, where no job's
time row binds, the market

    t* = min_{p ≥ 0} p·N / Σ_b ω_b min_c p_c w_bc,     w_bc = lv_bc / a_bc

(the cost, at prices p, of one unit of a job's share on slot c; its cheapest slot holds it at
the level): at the optimal prices every priced type's demand per unit of level,
d_k(p) = Σ_b ω_b w_bc*(b) [type of c*(b) = k], is the same multiple 1/t* of its N_k. The
minimum over slots is smoothed (a soft-min of temperature τ over log costs, so τ is the
relative cost difference at which a job is torn between two types) and the equations
log(d_k / N_k) = const are solved by Newton's method on log p, with τ lowered from `START`
by factors of ten to `FINISH`: each step is one pass over the jobs and a K × K solve. The
prices are then right to about τ, and the jobs whose cheapest type wins by less than that
are the few that the crossover leaves free. Nothing here is trusted: the crossover's
pricing and the certificate decide.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends.blocks.part import Part

START = 1e-1
FINISH = 1e-5
STEPS = 6  # Newton steps at each temperature at most
HALVINGS = 5
#: Temperatures above this are settled on a sample of `COARSE_SAMPLE` of the jobs.
COARSE = 2e-3
COARSE_SAMPLE = 0.1
SETTLED = 1e-3  # …fewer once the equations hold to this, relative to τ


def applicable(part: Part) -> bool:
    """The max-min level LP: one linking column (t, cost < 0) that enters the share rows
    only, those with right-hand side 0; no costs on the blocks; every linking row a ≤ row
    (a capacity) met by one slot kind with positive entries."""
    if part.linking_cols != 1 or part.cost_link[0] >= 0 or np.any(part.cost != 0):
        return False
    if np.any(part.h != 0) or np.any(part.g[1] != 0) or np.any(part.rhs[:, 0] != 0):
        return False
    valid = part.valid[:, : part.slots]
    return bool(
        np.all(part.g[0][:, 0] < 0)
        and np.all(part.sig_link > 0)
        and np.all(part.rhs_link > 0)
        and np.all(part.link >= 0)
        and np.all(part.a0[valid] > 0)
        and np.all(part.lv[valid] > 0)
    )


def market_prices(part: Part) -> tuple[FloatArray, FloatArray, float] | None:
    """(y_link, t, τ): the form's linking duals and level at the market's prices, and the
    finest temperature at which Newton's method settled; None when it settles at none."""
    valid = part.valid[:, : part.slots]
    with np.errstate(divide="ignore"):
        log_w = np.where(valid, np.log(part.lv) - np.log(np.where(valid, part.a0, 1.0)), np.inf)
    omega = -part.g[0][:, 0]
    k = part.linking_rows
    onehot = np.zeros((part.slots, k))
    onehot[np.arange(part.slots), part.link] = 1.0
    log_p, settled = np.zeros(k), None
    sample = np.random.default_rng(0).random(part.blocks) < COARSE_SAMPLE
    coarse = float(sample.mean()) if sample.any() else 1.0
    tau = START
    while tau >= FINISH * 0.999:
        # Coarse temperatures see the market from afar: a sample of the jobs does.
        at = sample if tau > COARSE else slice(None)
        scale = coarse if tau > COARSE else 1.0
        found = _settle(log_p, log_w[at], omega[at], onehot, part.rhs_link * scale, tau)
        if found is None:
            break  # too few jobs near the ties for so fine a temperature: keep the last
        log_p, settled = found, tau
        tau /= 10.0
    if settled is None:
        return None
    demand = _demand(log_p, log_w, omega, onehot, settled)
    level = float(np.min(part.rhs_link / demand))
    return -np.exp(log_p - log_p.max()), np.array([level]), settled


def _settle(
    log_p: FloatArray,
    log_w: FloatArray,
    omega: FloatArray,
    onehot: FloatArray,
    supply: FloatArray,
    tau: float,
) -> FloatArray | None:
    """Newton's method at temperature τ from log_p, each step halved until it lowers the
    largest residual; None when it does not settle within `STEPS`."""
    k = log_p.size
    residual, jacobian = _equations(log_p, log_w, omega, onehot, supply, tau)
    for _ in range(STEPS):
        worst = float(np.abs(residual).max())
        if worst <= SETTLED * tau:
            return log_p
        # d is homogeneous of degree 0 in p: fix the prices' scale with one more row.
        system = np.vstack([jacobian, np.ones((1, k))])
        step = _damped(np.linalg.lstsq(system, np.append(-residual, 0.0), rcond=None)[0])
        for _ in range(HALVINGS):
            trial = log_p + step
            r, j = _equations(trial, log_w, omega, onehot, supply, tau)
            if np.all(np.isfinite(r)) and np.abs(r).max() < worst:
                break
            step = step / 2
        else:
            return None
        log_p, residual, jacobian = trial, r, j
    return log_p if float(np.abs(residual).max()) <= SETTLED * tau else None


def _damped(step: FloatArray) -> FloatArray:
    """No price moves by more than a factor of e in one step."""
    top = float(np.abs(step).max(initial=0.0))
    return step if top <= 1.0 else step / top


def _choice(log_p: FloatArray, log_w: FloatArray, onehot: FloatArray, tau: float) -> FloatArray:
    """(B, C): each job's soft-min weights over its slots at prices e^log_p."""
    z = -(log_w + (onehot @ log_p)[None, :]) / tau
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    out: FloatArray = e / e.sum(axis=1, keepdims=True)
    return out


def _demand(
    log_p: FloatArray, log_w: FloatArray, omega: FloatArray, onehot: FloatArray, tau: float
) -> FloatArray:
    pi = _choice(log_p, log_w, onehot, tau)
    use = pi * np.exp(np.where(np.isfinite(log_w), log_w, 0.0)) * omega[:, None]
    out: FloatArray = use.sum(axis=0) @ onehot
    return out


def _equations(
    log_p: FloatArray,
    log_w: FloatArray,
    omega: FloatArray,
    onehot: FloatArray,
    supply: FloatArray,
    tau: float,
) -> tuple[FloatArray, FloatArray]:
    """(r, ∂r/∂log p) for r_k = log(d_k / N_k) − mean: zero at the market's prices."""
    pi = _choice(log_p, log_w, onehot, tau)
    cost = np.exp(np.where(np.isfinite(log_w), log_w, 0.0)) * omega[:, None]
    use = pi * cost  # (B, C)
    per_type_use = use @ onehot  # (B, K): W_bk
    per_type_pi = pi @ onehot  # (B, K): Π_bk
    demand = per_type_use.sum(axis=0)
    # ∂d_l/∂log p_m = −(1/τ) Σ_b (W_bl [l = m] − W_bl Π_bm)
    jac = -(np.diag(demand) - per_type_use.T @ per_type_pi) / tau
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(demand / supply)
        residual = ratio - ratio.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        jr = jac / demand[:, None]
    return residual, jr - jr.mean(axis=0, keepdims=True)
