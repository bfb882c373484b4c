"""Mehrotra's predictor-corrector interior point on a `BlockForm`.

minimize cᵀx s.t. A x = b, 0 ≤ x ≤ u, with duals y (rows), z ≥ 0 (x ≥ 0) and v ≥ 0 (x ≤ u):

    A x = b,   x + w = u,   Aᵀ y + z − v = c,   x z = μ,   w v = μ.

Each iteration solves two Newton systems with one factorization of A Θ Aᵀ, Θ = (Z/X + V/W)⁻¹
(`normal.py`), and steps a fraction 0.9995 of the way to the boundary, with separate primal
and dual step lengths. It stops when the primal and dual residuals, relative to the right-hand
side and the costs, and the gap between cᵀx and the dual objective bᵀy − uᵀv, relative to the
objective, are all within `tolerance`; the caller then certifies the answer on the model
itself (`backends.certificate`), whatever this loop believed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

import numpy as np
from numpy.typing import NDArray

from apportion.solver.backends.blocks import normal
from apportion.solver.backends.blocks.form import BlockForm

FloatArray = NDArray[np.float64]

STEP_FRACTION = 0.9995
#: Primal regularization: Θ = (Z/X + V/W + ρ)⁻¹, so no θ exceeds 1/ρ (see `normal`).
PRIMAL_REGULARIZATION = 1e-10
import os
_TRACE = bool(os.environ.get("IPM_TRACE"))
MAX_ITERATIONS = 200


class Stop(Enum):
    CONVERGED = "converged"
    ITERATIONS = "iteration limit"
    TIME = "time limit"
    STALLED = "stalled"  # no progress or a non-finite step: numerical trouble


@dataclass
class Iterate:
    x: FloatArray
    z: FloatArray
    w: FloatArray
    v: FloatArray
    y_loc: FloatArray
    y_link: FloatArray


@dataclass(frozen=True)
class Outcome:
    stop: Stop
    point: Iterate
    iterations: int
    residuals: tuple[float, float, float]  # primal, dual, gap (relative)


def start(form: BlockForm) -> Iterate:
    """Mehrotra's starting point: the least-norm x with A x = b and the least-norm z with
    Aᵀy + z = c, shifted inside the positive orthant (and inside the upper bounds) by amounts
    that balance x·z."""
    valid = form.valid
    ones = valid.astype(float)
    fac = normal.factor(form, ones)
    dyl, dyk = normal.solve(form, fac, form.rhs_loc, form.rhs_link)
    x = ones * form.transposed(dyl, dyk)
    c_loc, c_link = form.times(ones * form.cost)
    yl, yk = normal.solve(form, fac, c_loc, c_link)
    z = ones * (form.cost - form.transposed(yl, yk))
    x += max(-1.5 * float(x[valid].min(initial=0.0)), 0.0)
    z += max(-1.5 * float(z[valid].min(initial=0.0)), 0.0)
    xz = float(x[valid] @ z[valid])
    x += 0.5 * xz / max(float(z[valid].sum()), 1e-300) + 1e-8
    z += 0.5 * xz / max(float(x[valid].sum()), 1e-300) + 1e-8
    bounded = valid & np.isfinite(form.upper)
    upper = np.where(bounded, form.upper, 1.0)
    x = np.where(bounded, np.clip(x, 0.01 * upper, 0.99 * upper), x) * ones
    w = np.where(bounded, upper - x, 0.0)
    v = np.where(bounded, z, 0.0)
    return Iterate(x, z * ones, w, v, yl, yk)


def solve(form: BlockForm, tolerance: float, deadline: float | None) -> Outcome:
    it = start(form)
    valid = form.valid
    bounded = valid & np.isfinite(form.upper)
    pairs = int(valid.sum() + bounded.sum()) or 1
    b_loc, b_link = 1.0 + np.abs(form.rhs_loc), 1.0 + np.abs(form.rhs_link)
    c_norm = 1.0 + np.abs(form.cost)
    u_norm = 1.0 + np.where(bounded, form.upper, 0.0)
    last = (np.inf, np.inf, np.inf)
    for iteration in range(MAX_ITERATIONS + 1):
        rp_loc, rp_link, rd, ru = _residuals(form, it, bounded)
        primal = max(_inf(rp_loc / b_loc), _inf(rp_link / b_link), _inf(ru / u_norm))
        dual = _inf(rd / c_norm)
        pobj, dobj = _objectives(form, it, bounded)
        gap = abs(pobj - dobj) / (1.0 + abs(pobj))
        last = (primal, dual, gap)
        if _TRACE:
            print(iteration, f"{primal:.1e} {dual:.1e} {gap:.1e} pobj {pobj:.6e}")
        if max(last) <= tolerance:
            return Outcome(Stop.CONVERGED, it, iteration, last)
        if not np.isfinite(max(last)):
            return Outcome(Stop.STALLED, it, iteration, last)
        if iteration == MAX_ITERATIONS:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return Outcome(Stop.TIME, it, iteration, last)
        mu = (float(it.x[valid] @ it.z[valid]) + float(it.w[bounded] @ it.v[bounded])) / pairs
        it = _step(form, it, (rp_loc, rp_link, rd, ru), mu, bounded)
    return Outcome(Stop.ITERATIONS, it, MAX_ITERATIONS, last)


def _inf(v: FloatArray) -> float:
    return float(np.abs(v).max(initial=0.0))


def _residuals(
    form: BlockForm, it: Iterate, bounded: NDArray[np.bool_]
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    ax_loc, ax_link = form.times(it.x)
    rp_loc = np.where(form.row_valid, form.rhs_loc - ax_loc, 0.0)
    rp_link = form.rhs_link - ax_link
    rd = np.where(form.valid, form.cost - form.transposed(it.y_loc, it.y_link) - it.z + it.v, 0.0)
    ru = np.where(bounded, form.upper - it.x - it.w, 0.0)
    return rp_loc, rp_link, rd, ru


def _objectives(form: BlockForm, it: Iterate, bounded: NDArray[np.bool_]) -> tuple[float, float]:
    pobj = float(form.cost @ it.x)
    dobj = float((form.rhs_loc * it.y_loc).sum() + form.rhs_link @ it.y_link)
    dobj -= float(form.upper[bounded] @ it.v[bounded])
    return pobj, dobj


def _step(
    form: BlockForm,
    it: Iterate,
    residuals: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    mu: float,
    bounded: NDArray[np.bool_],
) -> Iterate:
    valid = form.valid
    xs = np.where(valid, it.x, 1.0)
    ws = np.where(bounded, it.w, 1.0)
    with np.errstate(divide="ignore"):
        theta = np.where(
            valid,
            1.0 / (it.z / xs + np.where(bounded, it.v / ws, 0.0) + PRIMAL_REGULARIZATION),
            0.0,
        )
    fac = normal.factor(form, theta)
    rp_loc, rp_link, rd, ru = residuals
    # Predictor: the affine direction.
    rxz, rwv = -it.x * it.z, np.where(bounded, -it.w * it.v, 0.0)
    aff = _direction(form, fac, theta, it, (rp_loc, rp_link, rd, ru), rxz, rwv, bounded)
    ap, ad = _lengths(it, aff, valid, bounded, 1.0)
    pairs = max(int(valid.sum() + bounded.sum()), 1)
    mu_aff = (
        float(((it.x + ap * aff[0]) * (it.z + ad * aff[1]))[valid].sum())
        + float(((it.w + ap * aff[2]) * (it.v + ad * aff[3]))[bounded].sum())
    ) / pairs
    sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
    # Corrector: centring plus the second-order term of the affine step.
    rxz = np.where(valid, sigma * mu - it.x * it.z - aff[0] * aff[1], 0.0)
    rwv = np.where(bounded, sigma * mu - it.w * it.v - aff[2] * aff[3], 0.0)
    dx, dz, dw, dv, dyl, dyk = _direction(form, fac, theta, it, (rp_loc, rp_link, rd, ru), rxz, rwv, bounded)
    ap, ad = _lengths(it, (dx, dz, dw, dv), valid, bounded, STEP_FRACTION)
    if _TRACE:
        n1 = form.blocks * form.slots; n2 = n1 + form.linking_cols; n3 = n2 + form.blocks * form.rows
        def who(val, st, where):
            f = where & (st < 0)
            if not f.any(): return "-"
            r = np.where(f, -val / np.where(f, st, -1), np.inf); i = int(np.argmin(r))
            part = "X" if i < n1 else "G" if i < n2 else "SL" if i < n3 else "SK"
            extra = f"slot {i % form.slots}" if part == "X" else (f"row {(i-n2) % form.rows}" if part == "SL" else "")
            return f"{part}{extra} val {val[i]:.1e} step {st[i]:.1e}"
        print(f"   mu {mu:.1e} sigma {sigma:.2e} ap {ap:.3f} ad {ad:.3f}", "P:", who(it.x, dx, valid), "| D:", who(it.z, dz, valid))
    return Iterate(
        it.x + ap * dx,
        it.z + ad * dz,
        it.w + ap * dw,
        it.v + ad * dv,
        it.y_loc + ad * dyl,
        it.y_link + ad * dyk,
    )


def _direction(
    form: BlockForm,
    fac: normal.Factor,
    theta: FloatArray,
    it: Iterate,
    residuals: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
    rxz: FloatArray,
    rwv: FloatArray,
    bounded: NDArray[np.bool_],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The Newton direction (dx, dz, dw, dv, dy_loc, dy_link) for the given right-hand sides."""
    rp_loc, rp_link, rd, ru = residuals
    valid = form.valid
    xs = np.where(valid, it.x, 1.0)
    ws = np.where(bounded, it.w, 1.0)
    rho = rd - rxz / xs + np.where(bounded, (rwv - it.v * ru) / ws, 0.0)
    t_loc, t_link = form.times(theta * rho)
    dyl, dyk = normal.refined(form, fac, theta, rp_loc + t_loc, rp_link + t_link)
    dx = theta * (form.transposed(dyl, dyk) - rho)
    dz = np.where(valid, (rxz - it.z * dx) / xs, 0.0)
    dw = np.where(bounded, ru - dx, 0.0)
    dv = np.where(bounded, (rwv - it.v * dw) / ws, 0.0)
    return dx, dz, dw, dv, dyl, dyk


def _lengths(
    it: Iterate,
    d: tuple[FloatArray, ...],
    valid: NDArray[np.bool_],
    bounded: NDArray[np.bool_],
    fraction: float,
) -> tuple[float, float]:
    """Primal and dual step lengths keeping x, w (primal) and z, v (dual) positive."""
    dx, dz, dw, dv = d[:4]
    primal = min(_ratio(it.x, dx, valid), _ratio(it.w, dw, bounded))
    dual = min(_ratio(it.z, dz, valid), _ratio(it.v, dv, bounded))
    return min(1.0, fraction * primal), min(1.0, fraction * dual)


def _ratio(value: FloatArray, step: FloatArray, where: NDArray[np.bool_]) -> float:
    falling = where & (step < 0)
    if not falling.any():
        return np.inf
    return float((-value[falling] / step[falling]).min())
