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

from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends.blocks import normal
from apportion.solver.backends.blocks.form import BlockForm

STEP_FRACTION = 0.9995
#: Primal regularization: Θ = (Z/X + V/W + ρ)⁻¹, so no θ exceeds 1/ρ (see `normal`).
PRIMAL_REGULARIZATION = 1e-10

MAX_ITERATIONS = 100
#: A solve whose worst residual has not halved in this many iterations has stalled (a
#: feasible set thinner than the tolerances, e.g. floors a hair below a job's ceiling): the
#: caller's general backend then takes the model.
PATIENCE = 15


class Stop(Enum):
    CONVERGED = "converged"
    ITERATIONS = "iteration limit"
    TIME = "time limit"
    STALLED = "stalled"  # no progress or a non-finite step: numerical trouble


@dataclass
class Iterate:
    x: FloatArray
    z: FloatArray
    w: FloatArray  # upper-bound slacks, on `Bounds.index` only
    v: FloatArray
    y_loc: FloatArray
    y_link: FloatArray


@dataclass(frozen=True)
class IpmRun:
    stop: Stop
    point: Iterate
    iterations: int
    residuals: tuple[float, float, float]  # primal, dual, gap (relative)


@dataclass(frozen=True)
class Bounds:
    """The entries with a finite upper bound: few (range slacks, exceed columns), so their
    terms are kept on their own index rather than over every column."""

    index: NDArray[np.int64]
    upper: FloatArray

    @classmethod
    def of(cls, form: BlockForm) -> Bounds:
        index = np.flatnonzero(form.valid & np.isfinite(form.upper))
        return cls(index, form.upper[index])


def start(form: BlockForm, bounds: Bounds) -> Iterate:
    """Mehrotra's starting point: the least-norm x with A x = b and the least-norm z with
    Aᵀy + z = c, shifted inside the positive orthant (and inside the upper bounds) by amounts
    that balance x·z."""
    ones = form.valid.astype(float)
    fac = normal.factor(form, ones)
    dyl, dyk = normal.solve(form, fac, form.rhs_loc, form.rhs_link)
    x = ones * form.transposed(dyl, dyk)
    c_loc, c_link = form.times(ones * form.cost)
    yl, yk = normal.solve(form, fac, c_loc, c_link)
    z = ones * (form.cost - form.transposed(yl, yk))
    x += max(-1.5 * float(x.min(initial=0.0)), 0.0)
    z += max(-1.5 * float(z.min(initial=0.0)), 0.0)
    x, z = x * ones, z * ones
    xz = float(x @ z)
    x = ones * (x + 0.5 * xz / max(float(z.sum()), 1e-300) + 1e-8)
    z = ones * (z + 0.5 * xz / max(float(x.sum()), 1e-300) + 1e-8)
    i, u = bounds.index, bounds.upper
    x[i] = np.clip(x[i], 0.01 * u, 0.99 * u)
    return Iterate(x, z, u - x[i], z[i].copy(), yl, yk)


def solve(form: BlockForm, tolerance: float, deadline: float | None) -> IpmRun:
    bounds = Bounds.of(form)
    it = start(form, bounds)
    pairs = max(int(form.valid.sum()) + bounds.index.size, 1)
    scales = (
        1.0 / (1.0 + np.abs(form.rhs_loc)),
        1.0 / (1.0 + np.abs(form.rhs_link)),
        1.0 / (1.0 + np.abs(form.cost)),
        1.0 / (1.0 + bounds.upper),
    )
    last = (np.inf, np.inf, np.inf)
    offset = form.offset
    best, since = np.inf, 0
    for iteration in range(MAX_ITERATIONS + 1):
        residuals = _residuals(form, it, bounds)
        primal = max(
            _inf(r * q)
            for r, q in zip(residuals[:2] + residuals[3:], scales[:2] + scales[3:], strict=True)
        )
        dual = _inf(residuals[2] * scales[2])
        pobj, dobj = _objectives(form, it, bounds)
        # Relative to the objective itself, as the certificate measures it (`relative_gap`).
        size = max(abs(pobj + offset), abs(dobj + offset), 1e-12)
        last = (primal, dual, abs(pobj - dobj) / size)
        if max(last) <= tolerance:
            return IpmRun(Stop.CONVERGED, it, iteration, last)
        best, since = (max(last), 0) if max(last) < 0.5 * best else (best, since + 1)
        if not np.isfinite(max(last)) or since > PATIENCE:
            return IpmRun(Stop.STALLED, it, iteration, last)
        if iteration == MAX_ITERATIONS:
            break
        if deadline is not None and time.perf_counter() > deadline:
            return IpmRun(Stop.TIME, it, iteration, last)
        mu = (float(it.x @ it.z) + float(it.w @ it.v)) / pairs
        with np.errstate(over="ignore", invalid="ignore"):
            it = _step(form, it, residuals, mu, bounds, pairs)
    return IpmRun(Stop.ITERATIONS, it, MAX_ITERATIONS, last)


def _inf(v: FloatArray) -> float:
    return float(np.abs(v).max(initial=0.0))


Residuals = tuple[FloatArray, FloatArray, FloatArray, FloatArray]


def _residuals(form: BlockForm, it: Iterate, bounds: Bounds) -> Residuals:
    """(b − A x on block rows, on linking rows, c − Aᵀy − z + v, u − x − w)."""
    ax_loc, ax_link = form.times(it.x)
    rp_loc = form.row_valid * (form.rhs_loc - ax_loc)
    rd = form.valid * (form.cost - form.transposed(it.y_loc, it.y_link) - it.z)
    rd[bounds.index] += it.v
    return rp_loc, form.rhs_link - ax_link, rd, bounds.upper - it.x[bounds.index] - it.w


def _objectives(form: BlockForm, it: Iterate, bounds: Bounds) -> tuple[float, float]:
    pobj = float(form.cost @ it.x)
    dobj = float((form.rhs_loc * it.y_loc).sum() + form.rhs_link @ it.y_link)
    return pobj, dobj - float(bounds.upper @ it.v)


def _step(
    form: BlockForm, it: Iterate, residuals: Residuals, mu: float, bounds: Bounds, pairs: int
) -> Iterate:
    i = bounds.index
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_x = np.where(form.valid, 1.0 / it.x, 0.0)
    spread = it.z * inv_x + PRIMAL_REGULARIZATION
    spread[i] += it.v / it.w
    theta = form.valid / spread
    fac = normal.factor(form, theta)
    # Predictor: the affine direction.
    aff = _direction(form, fac, theta, inv_x, it, residuals, -it.x * it.z, -it.w * it.v, i)
    ap, ad = _lengths(it, aff, 1.0)
    mu_aff = (
        float((it.x + ap * aff[0]) @ (it.z + ad * aff[1]))
        + float((it.w + ap * aff[2]) @ (it.v + ad * aff[3]))
    ) / pairs
    sigma = min(1.0, (mu_aff / mu) ** 3) if mu > 0 else 0.0
    # Corrector: centring plus the second-order term of the affine step.
    rxz = form.valid * (sigma * mu - it.x * it.z - aff[0] * aff[1])
    rwv = sigma * mu - it.w * it.v - aff[2] * aff[3]
    dx, dz, dw, dv, dyl, dyk = _direction(form, fac, theta, inv_x, it, residuals, rxz, rwv, i)
    ap, ad = _lengths(it, (dx, dz, dw, dv), STEP_FRACTION)
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
    inv_x: FloatArray,
    it: Iterate,
    residuals: Residuals,
    rxz: FloatArray,
    rwv: FloatArray,
    i: NDArray[np.int64],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """The Newton direction (dx, dz, dw, dv, dy_loc, dy_link) for the given right-hand sides
    (dw, dv on the bounded entries only)."""
    rp_loc, rp_link, rd, ru = residuals
    rho = rd - rxz * inv_x
    rho[i] += (rwv - it.v * ru) / it.w
    t_loc, t_link = form.times(theta * rho)
    dyl, dyk, aty = normal.refined(form, fac, theta, rp_loc + t_loc, rp_link + t_link)
    dx = theta * (aty - rho)
    dz = (rxz - it.z * dx) * inv_x
    dw = ru - dx[i]
    dv = (rwv - it.v * dw) / it.w
    return dx, dz, dw, dv, dyl, dyk


def _lengths(it: Iterate, d: tuple[FloatArray, ...], fraction: float) -> tuple[float, float]:
    """Primal and dual step lengths keeping x, w (primal) and z, v (dual) positive."""
    dx, dz, dw, dv = d[:4]
    primal = min(_ratio(it.x, dx), _ratio(it.w, dw))
    dual = min(_ratio(it.z, dz), _ratio(it.v, dv))
    return min(1.0, fraction * primal), min(1.0, fraction * dual)


def _ratio(value: FloatArray, step: FloatArray) -> float:
    """The largest α with value + α step ≥ 0 (steps are 0 on entries not in play).

    As 1 / max(−step / value): one division and one reduction over the vector, instead of a
    mask and a division on the entries that fall (this runs eight times an iteration). An
    entry out of play (0 / 0) is NaN, which `fmin` passes over; one at 0 that falls gives −∞,
    a step of 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        lowest = float(np.fmin.reduce(np.divide(step, value), initial=np.inf))
    return -1.0 / lowest if lowest < 0 else np.inf
