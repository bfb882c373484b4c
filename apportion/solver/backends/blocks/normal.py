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
once, and Σ_b E_bᵀ B_b⁻¹ E_b is R matrix products of
blocks × (K + 1) arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.solver.arraytypes import FloatArray
from apportion.solver.backends.blocks.form import BlockForm

#: Pivots of a block below this fraction of its diagonal are lifted to it.
PIVOT_FLOOR = 1e-14
#: Dual regularization: A Θ Aᵀ + δ I is what is solved (rows are scaled to order one). The
#: max-min LP is degenerate (a job on one type with both its rows tight leaves its 2 × 2 block
#: of rank one up to 1/θ ≈ μ): without it, late iterations lose every digit.
DUAL_REGULARIZATION = 1e-10


@dataclass(frozen=True, eq=False)
class Factor:
    """A Θ Aᵀ factored for one Θ: each block's LDLᵀ, E and B⁻¹E per block row, and the dense
    system S."""

    inverse: list[list[FloatArray]]  # [r][q ≤ r]: every block's LDLᵀ (see `_ldl`), each (B,)
    e: list[FloatArray]  # [r]: (B, L + P)
    f: list[FloatArray]  # [r]: (B, L + P), rows of B⁻¹E
    s: FloatArray  # (L + P, L + P)
    theta_g: FloatArray  # (P,)


def factor(form: BlockForm, theta: FloatArray) -> Factor:
    tl, tg, tsl, tsk = form.parts(theta)
    nr, nl = form.rows, form.linking_rows
    weighted = [form.a[r] * tl for r in range(nr)]
    blocks = [[np.zeros(0)] * nr for _ in range(nr)]
    for r in range(nr):
        for q in range(r + 1):
            blocks[r][q] = blocks[q][r] = np.einsum("bc,bc->b", weighted[r], form.a[q])
        diag = blocks[r][r] + form.sig_loc[:, r] ** 2 * tsl[:, r] + DUAL_REGULARIZATION
        blocks[r][r] = np.where(form.row_valid[:, r], diag, 1.0)
    inverse = _ldl(blocks)
    e = [_linked(form, w * form.lv, form.g[r]) for r, w in enumerate(weighted)]
    f = _apply(inverse, e)
    s = -_gram(e, f)
    d = form.scatter(np.einsum("bc,bc->c", form.lv * tl, form.lv))
    d += form.sig_link**2 * tsk + DUAL_REGULARIZATION
    s[:nl, :nl] += np.diag(d)
    s[:nl, nl:] += form.h
    s[nl:, :nl] += form.h.T
    scale = 1.0 / (1.0 + tg)
    s[nl:, :] *= (tg * scale)[:, None]
    s[nl:, nl:] -= np.diag(scale)
    return Factor(inverse, e, f, s, tg)


def _gram(e: list[FloatArray], f: list[FloatArray]) -> FloatArray:
    """Σ_r e_rᵀ f_r: the blocks summed out (each a product over the blocks)."""
    out: FloatArray = e[0].T @ f[0]
    for er, fr in zip(e[1:], f[1:], strict=True):
        out = out + er.T @ fr
    return out


def _linked(form: BlockForm, per_slot: FloatArray, g: FloatArray) -> FloatArray:
    """(B, L + P): per-slot values summed into their slot's linking row, then g."""
    out = np.zeros((form.blocks, form.linking_rows + form.linking_cols))
    for c in np.flatnonzero(form.slot_link >= 0).tolist():
        out[:, form.slot_link[c]] += per_slot[:, c]
    out[:, form.linking_rows :] = g
    return out


def solve(
    form: BlockForm, fac: Factor, r_loc: FloatArray, r_link: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Δy = (A Θ Aᵀ + δI)⁻¹ r, as (block rows (B, R), linking rows (L,))."""
    nl = form.linking_rows
    rows = [np.where(form.row_valid[:, r], r_loc[:, r], 0.0) for r in range(form.rows)]
    u = [ur[:, 0] for ur in _apply(fac.inverse, [r[:, None] for r in rows])]
    etu = _gram(fac.e, u)
    rhs = np.concatenate([r_link - etu[:nl], -(fac.theta_g / (1.0 + fac.theta_g)) * etu[nl:]])
    try:
        small = np.linalg.solve(fac.s, rhs) if rhs.size else rhs
    except np.linalg.LinAlgError:  # singular to working precision: the least-squares step
        small = np.linalg.lstsq(fac.s, rhs, rcond=None)[0]
    dy = np.column_stack([ur - fr @ small for ur, fr in zip(u, fac.f, strict=True)])
    return np.where(form.row_valid, dy, 0.0), small[:nl]


def _ldl(blocks: list[list[FloatArray]]) -> list[list[FloatArray]]:
    """Every block's LDLᵀ at once, unrolled over its R rows: entry (r, q < r) of the unit
    lower factor, and the pivots on the diagonal. A pivot below `PIVOT_FLOOR` of its
    diagonal is lifted to that (a degenerate block: both rows tight on one column)."""
    nr = len(blocks)
    low = [[np.zeros(0)] * nr for _ in range(nr)]
    for j in range(nr):
        pivot = blocks[j][j] - sum((low[j][k] ** 2 * low[k][k] for k in range(j)), 0.0)
        low[j][j] = np.maximum(pivot, PIVOT_FLOOR * blocks[j][j])
        for i in range(j + 1, nr):
            acc = blocks[i][j] - sum((low[i][k] * low[j][k] * low[k][k] for k in range(j)), 0.0)
            low[i][j] = acc / low[j][j]
    return low


def _apply(low: list[list[FloatArray]], rhs: list[FloatArray]) -> list[FloatArray]:
    """B_b⁻¹ applied to per-row right-hand sides (each (B, m)), by the blocks' LDLᵀ."""
    nr = len(rhs)
    z = list(rhs)
    for i in range(nr):
        for k in range(i):
            z[i] = z[i] - low[i][k][:, None] * z[k]
    z = [z[i] / low[i][i][:, None] for i in range(nr)]
    for i in range(nr - 1, -1, -1):
        for k in range(i + 1, nr):
            z[i] = z[i] - low[k][i][:, None] * z[k]
    return z


def refined(
    form: BlockForm,
    fac: Factor,
    theta: FloatArray,
    r_loc: FloatArray,
    r_link: FloatArray,
    tolerance: float = 1e-12,
    steps: int = 20,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(Δy on block rows, on linking rows, AᵀΔy) by conjugate gradients on A Θ Aᵀ itself,
    preconditioned by `solve`.

    `solve` is exact in exact arithmetic, but forming S subtracts, per type, the large terms
    of the jobs whose columns their own rows pin (θ of a basic column grows like 1/μ) from
    their sum: late in a solve S keeps few correct digits. Its error lies in the (L + P)
    dimensions of S alone, so conjugate gradients preconditioned by it end within about
    L + P + 1 steps, each one product with A Θ Aᵀ (`BlockForm.times`, `transposed`), exact
    to rounding. They stop at `tolerance` or when the residual stops falling (rounding), and
    return the best point seen, with its Aᵀ-image (kept along, as the caller needs it)."""
    row_valid = form.row_valid

    def apply(at: FloatArray) -> tuple[FloatArray, FloatArray]:
        ml, mk = form.times(theta * at)
        return ml * row_valid, mk

    def size(al: FloatArray, ak: FloatArray) -> float:
        return float(np.sqrt(np.einsum("ij,ij->", al, al) + ak @ ak))

    r_loc = r_loc * row_valid
    limit = tolerance * size(r_loc, r_link)
    xl, xk = solve(form, fac, r_loc, r_link)
    xt = form.transposed(xl, xk)
    ml, mk = apply(xt)
    rl, rk = r_loc - ml, r_link - mk
    best = (size(rl, rk), xl, xk, xt)
    if best[0] <= limit:
        return xl, xk, xt
    zl, zk = solve(form, fac, rl, rk)
    pl, pk = zl, zk
    rz = float(np.einsum("ij,ij->", rl, zl) + rk @ zk)
    for _ in range(steps):
        pt = form.transposed(pl, pk)
        ql, qk = apply(pt)
        curvature = float(np.einsum("ij,ij->", pl, ql) + pk @ qk)
        if not (curvature > 0 and rz > 0):
            break
        alpha = rz / curvature
        xl, xk, xt = xl + alpha * pl, xk + alpha * pk, xt + alpha * pt
        rl, rk = rl - alpha * ql, rk - alpha * qk
        now = size(rl, rk)
        if not now < best[0]:
            break
        best = (now, xl, xk, xt)
        if now <= limit:
            break
        zl, zk = solve(form, fac, rl, rk)
        rz_next = float(np.einsum("ij,ij->", rl, zl) + rk @ zk)
        pl, pk = zl + (rz_next / rz) * pl, zk + (rz_next / rz) * pk
        rz = rz_next
    return best[1], best[2], best[3]
