"""The interior point's normal equations A Θ Aᵀ Δy = r, solved through the block shape.

Ordered as (block rows, linking rows), the matrix made of the blocks' columns and the slacks is

    [ B   Cᵀ ]      B = diag(B_b): R × R per block (R = 2 for a share LP: share and time rows)
    [ C   D  ]      C: linking rows × block rows;  D: diagonal (each block column meets at most
                                                   one linking row)

and each linking column p (the level t) adds the dense rank one term θ_p w_p w_pᵀ. With
ω = Θ_P Wᵀ Δy as extra unknowns, eliminating the blocks' rows leaves one dense system of
(linking rows + linking columns) unknowns, a (K + 1) × (K + 1) matrix for max-min over K types:

    S = [ D − C B⁻¹ Cᵀ               h − C B⁻¹ g ]
        [ Θ_P (hᵀ − gᵀ B⁻¹ Cᵀ)     −Θ_P gᵀ B⁻¹ g − I ]

(the second block row scaled by 1 / (1 + θ_p) to keep it bounded). Everything per block is
vectorized across blocks: B_b is factored (LDLᵀ, unrolled over its R rows) for all blocks at
once, and Σ_b E_bᵀ B_b⁻¹ E_b is one matrix product of (blocks · R) × (K + 1) arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from apportion.solver.backends.blocks.form import BlockForm

FloatArray = NDArray[np.float64]

#: Pivots of a block below this fraction of its diagonal are lifted to it.
PIVOT_FLOOR = 1e-14
#: Dual regularization: A Θ Aᵀ + δ I is what is solved (rows are scaled to order one). The
#: max-min LP is degenerate (a job on one type with both its rows tight leaves its 2 × 2 block
#: of rank one up to 1/θ ≈ μ): without it, late iterations lose every digit.
DUAL_REGULARIZATION = 1e-10


@dataclass(frozen=True, eq=False)
class Factor:
    """A Θ Aᵀ factored for one Θ: the blocks' LDLᵀ, B⁻¹E and the dense system S."""

    lower: FloatArray  # (B, R, R) unit lower factor
    pivots: FloatArray  # (B, R)
    e: FloatArray  # (B, R, L + P)
    f: FloatArray  # (B, R, L + P) = B⁻¹ E
    s: FloatArray  # (L + P, L + P)
    theta_g: FloatArray  # (P,)


def factor(form: BlockForm, theta: FloatArray) -> Factor:
    tl, tg, tsl, tsk = form.parts(theta)
    nr, nl = form.rows, form.linking_rows
    weighted = form.a * tl[:, None, :]
    blocks = np.empty((form.blocks, nr, nr))
    for r in range(nr):
        for q in range(r + 1):
            blocks[:, r, q] = np.einsum("bc,bc->b", weighted[:, r, :], form.a[:, q, :])
            blocks[:, q, r] = blocks[:, r, q]
        blocks[:, r, r] += form.sig_loc[:, r] ** 2 * tsl[:, r] + DUAL_REGULARIZATION
        blocks[:, r, r] = np.where(form.row_valid[:, r], blocks[:, r, r], 1.0)
    lower, pivots = _ldl(blocks)
    lvt = form.lv * tl
    onehot = np.zeros((form.slots, nl))
    linked = form.slot_link >= 0
    onehot[np.flatnonzero(linked), form.slot_link[linked]] = 1.0
    e = np.concatenate([(weighted * form.lv[:, None, :]) @ onehot, form.g], axis=2)
    f = _ldl_solve(lower, pivots, e)
    flat_e = e.reshape(-1, e.shape[2])
    etf = flat_e.T @ f.reshape(-1, e.shape[2])
    d = (lvt * form.lv).sum(axis=0) @ onehot + form.sig_link**2 * tsk + DUAL_REGULARIZATION
    s = -etf
    s[:nl, :nl] += np.diag(d)
    s[:nl, nl:] += form.h
    s[nl:, :nl] += form.h.T
    scale = 1.0 / (1.0 + tg)
    s[nl:, :] *= (tg * scale)[:, None]
    s[nl:, nl:] -= np.diag(scale)
    return Factor(lower, pivots, e, f, s, tg)


def solve(form: BlockForm, fac: Factor, r_loc: FloatArray, r_link: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Δy = (A Θ Aᵀ)⁻¹ r, as (block rows (B, R), linking rows (L,))."""
    nl = form.linking_rows
    u = _ldl_solve(fac.lower, fac.pivots, r_loc[:, :, None])[:, :, 0]
    u = np.where(form.row_valid, u, 0.0)
    etu = fac.e.reshape(-1, fac.e.shape[2]).T @ u.ravel()
    rhs = np.concatenate([r_link - etu[:nl], -(fac.theta_g / (1.0 + fac.theta_g)) * etu[nl:]])
    small = np.linalg.solve(fac.s, rhs) if rhs.size else rhs
    dy_loc = u - np.einsum("brk,k->br", fac.f, small)
    return np.where(form.row_valid, dy_loc, 0.0), small[:nl]


def refined(
    form: BlockForm,
    fac: Factor,
    theta: FloatArray,
    r_loc: FloatArray,
    r_link: FloatArray,
    tolerance: float = 1e-12,
    steps: int = 20,
) -> tuple[FloatArray, FloatArray]:
    """Δy by conjugate gradients on A Θ Aᵀ itself, preconditioned by `solve`.

    `solve` is exact in exact arithmetic, but forming S subtracts, per type, the large terms
    of the jobs whose columns their own rows pin (θ of a basic column grows like 1/μ) from
    their sum: late in a solve S keeps few correct digits. Its error lies in the (L + P)
    dimensions of S alone, so conjugate gradients preconditioned by it end within about
    L + P + 1 steps, each one product with A Θ Aᵀ (`BlockForm.times`, `transposed`), exact
    to rounding. They stop at `tolerance` or when the residual stops falling (rounding), and
    return the best point seen."""
    row_valid = form.row_valid

    def apply(yl: FloatArray, yk: FloatArray) -> tuple[FloatArray, FloatArray]:
        ml, mk = form.times(theta * form.transposed(yl, yk))
        ml += DUAL_REGULARIZATION * yl
        mk += DUAL_REGULARIZATION * yk
        return np.where(row_valid, ml, 0.0), mk

    def size(al: FloatArray, ak: FloatArray) -> float:
        return float(np.sqrt((al * al).sum() + ak @ ak))

    r_loc = np.where(row_valid, r_loc, 0.0)
    norm = size(r_loc, r_link)
    xl, xk = solve(form, fac, r_loc, r_link)
    ml, mk = apply(xl, xk)
    rl, rk = r_loc - ml, r_link - mk
    best = (size(rl, rk), xl, xk)
    zl, zk = solve(form, fac, rl, rk)
    pl, pk = zl, zk
    rz = float((rl * zl).sum() + rk @ zk)
    for _ in range(steps):
        if best[0] <= tolerance * norm:
            break
        ql, qk = apply(pl, pk)
        curvature = float((pl * ql).sum() + pk @ qk)
        if not (curvature > 0 and rz > 0):
            break
        alpha = rz / curvature
        xl, xk = xl + alpha * pl, xk + alpha * pk
        rl, rk = rl - alpha * ql, rk - alpha * qk
        now = size(rl, rk)
        if not now < best[0]:
            break
        best = (now, xl, xk)
        zl, zk = solve(form, fac, rl, rk)
        rz_next = float((rl * zl).sum() + rk @ zk)
        pl, pk = zl + (rz_next / rz) * pl, zk + (rz_next / rz) * pk
        rz = rz_next
    import os
    if os.environ.get("IPM_TRACE"):
        print(f"     pcg rel {best[0] / max(norm, 1e-300):.1e} theta {theta[form.valid].min():.1e}..{theta[form.valid].max():.1e}")
    return best[1], best[2]


def _ldl(m: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Unit lower L and pivots d with m_b = L_b diag(d_b) L_bᵀ, for every block at once."""
    nb, nr, _ = m.shape
    low = np.zeros_like(m)
    d = np.empty((nb, nr))
    for j in range(nr):
        low[:, j, j] = 1.0
        dj = m[:, j, j] - sum(low[:, j, k] ** 2 * d[:, k] for k in range(j))
        d[:, j] = np.maximum(dj, PIVOT_FLOOR * np.maximum(m[:, j, j], 1e-300))
        for i in range(j + 1, nr):
            acc = m[:, i, j] - sum(low[:, i, k] * low[:, j, k] * d[:, k] for k in range(j))
            low[:, i, j] = acc / d[:, j]
    return low, d


def _ldl_solve(low: FloatArray, d: FloatArray, rhs: FloatArray) -> FloatArray:
    """L diag(d) Lᵀ x = rhs per block; rhs is (B, R, m)."""
    nr = d.shape[1]
    z = rhs.copy()
    for i in range(nr):
        for k in range(i):
            z[:, i, :] -= low[:, i, k, None] * z[:, k, :]
    z /= d[:, :, None]
    for i in range(nr - 1, -1, -1):
        for k in range(i + 1, nr):
            z[:, i, :] -= low[:, k, i, None] * z[:, k, :]
    return z
