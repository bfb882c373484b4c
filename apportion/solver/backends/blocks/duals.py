"""The crossover of the duals (FORMULATIONS §1e): linking prices under which the restricted
master's answer and every fixed block's basis are optimal together.

The master's duals on a linking row are not unique when few blocks are free (a fixed block
cannot switch slots, so only the free ones bound a price), and a simplex returns an extreme
one, at which many fixed blocks look wrong. The prices that do keep every fixed block's basis
optimal are what is wanted, and they form an LP in the linking duals alone: with a block's
basis B fixed, its row duals are Bᵀ⁻¹ q_B(y) and each nonbasic variable's reduced cost is
affine in y,

    r_bv(y) = c_bv − z·c_B − lv_bv y_l(v) + Σ_{i ∈ B} z_i lv_bi y_l(i),     z = B⁻¹ e_v.

Unknowns: the linking duals and the free blocks' row duals. Rows: the master's optimality
conditions at its answer (each master column's reduced cost = 0 between its bounds, ≥ 0 at its
lower one, ≤ 0 at its upper one), and the cuts r_bv(y) + e_bv ≥ 0 with elastic e ≥ 0, for
the fixed blocks' variables that are near binding. Minimizing Σ e: at 0 the prices make the
whole answer optimal; otherwise the blocks whose cuts stay violated are the ones the master
must free. The cuts are added as a pass over every fixed block finds them violated at the
LP's prices (each pass a vectorized sweep), so the LP stays as small as the free blocks and
the near-ties; its unknowns are scaled by the master's largest price.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends.base import SolveSettings
from apportion.solver.backends.blocks.master import MasterAnswer
from apportion.solver.backends.blocks.part import Bases, Part
from apportion.solver.backends.highs import HighsBackend
from apportion.solver.model import CompiledModel, Sense
from apportion.solver.status import Status

#: Rounds of cuts at most before the crossover of the duals gives up.
CUT_ROUNDS = 25
#: A master column within this (relative to its bound's size) of a bound sits at it.
AT_BOUND = 1e-9


@dataclass(frozen=True, eq=False)
class Settled:
    y_link: FloatArray  # (L,)
    y_free: FloatArray  # (F, 2)
    wrong: BoolArray  # (B,) fixed blocks that no prices of the master's face keep optimal
    cuts: int


def reduced(part: Part, bases: Bases, y_link: FloatArray) -> FloatArray:
    """(B, V): each block's variables' reduced costs at prices y_link with its basis's row
    duals; +∞ for basic and absent variables, −∞ on every variable of a singular basis."""
    q = part.priced(y_link)
    y = bases.duals(part, q)
    out = np.full(q.shape, np.inf)
    for var in range(part.slots + 2):
        e0, e1 = part.column(var)
        basic = (bases.u == var) | (bases.v == var)
        here = part.valid[:, var] & ~basic
        out[:, var] = np.where(here, q[:, var] - e0 * y[:, 0] - e1 * y[:, 1], np.inf)
    singular = ~np.isfinite(y).all(axis=1)
    out[singular] = -np.inf
    return out


def dual_scale(part: Part, y_link: FloatArray) -> FloatArray:
    """(B,): the size a block's reduced costs are measured against (as in the pricing)."""
    q = part.priced(y_link)
    scale: FloatArray = 1.0 + np.abs(q).max(axis=1)
    return scale


def settle(
    part: Part,
    bases: Bases,
    free: BoolArray,
    master: MasterAnswer,
    tolerance: float,
    settings: SolveSettings,
) -> Settled | None:
    """Prices in the master's optimal face that keep every fixed block's basis optimal (to
    `tolerance`), or the fewest blocks they cannot (`Settled.wrong`); None when the LP is not
    solved or the cuts do not close within `CUT_ROUNDS`."""
    top = float(np.abs(master.y_link).max(initial=0.0))
    sigma = top if top > 0 else 1.0
    fixed = ~free
    cut = np.zeros((part.blocks, part.slots + 2), bool)
    y_link, y_free = master.y_link, master.y_free
    for _ in range(CUT_ROUNDS):
        r = reduced(part, bases, y_link)
        bad_cells = fixed[:, None] & (r < -tolerance * dual_scale(part, y_link)[:, None])
        new = bad_cells & ~cut
        if not new.any():
            wrong: BoolArray = np.asarray(bad_cells.any(axis=1))
            return Settled(y_link, y_free, wrong, int(cut.sum()))
        cut |= new
        found = _solve(part, bases, free, master, cut, sigma, settings)
        if found is None:
            return None
        y_link, y_free = found
    return None


def _solve(
    part: Part,
    bases: Bases,
    free: BoolArray,
    master: MasterAnswer,
    cut: BoolArray,
    sigma: float,
    settings: SolveSettings,
) -> tuple[FloatArray, FloatArray] | None:
    """The elastic LP over the cuts `cut` (cells of fixed blocks); (y_link, y_free)."""
    nl = part.linking_rows
    index = np.flatnonzero(free)
    f = index.size
    blocks_cut, vars_cut = np.nonzero(cut)
    m = blocks_cut.size
    n = nl + 2 * f + m
    pieces = [
        _t_rows(part, index, master, sigma, nl),
        _free_rows(part, index, master, sigma, nl),
        _cut_rows(part, bases, blocks_cut, vars_cut, sigma, nl + 2 * f),
    ]
    rows, cols, vals, lo, up = _stack(pieces)
    matrix = sp.csc_matrix((vals, (rows, cols)), shape=(lo.size, n))
    col_lo, col_up = _slack_bounds(part, master, n)
    col_lo[nl + 2 * f :] = 0.0
    model = CompiledModel(
        name="duals",
        sense=Sense.MINIMIZE,
        matrix=matrix,
        cost=np.r_[np.zeros(nl + 2 * f), np.ones(m)],
        offset=0.0,
        col_lower=col_lo,
        col_upper=col_up,
        row_lower=lo,
        row_upper=up,
        integer=np.zeros(n, bool),
        variables=(),
        constraints=(),
    )
    solution = HighsBackend().solve(model, settings)
    if solution.status is not Status.OPTIMAL:
        return None
    y = solution.x * sigma
    return y[:nl], y[nl : nl + 2 * f].reshape(f, 2)


_Rows = tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]


def _stack(pieces: list[_Rows]) -> _Rows:
    """Row blocks one under the other."""
    rows, cols, vals, lo, up = [], [], [], [], []
    offset = 0
    for r, c, v, low, high in pieces:
        rows.append(r + offset)
        cols.append(c)
        vals.append(v)
        lo.append(low)
        up.append(high)
        offset += low.size
    return (
        np.concatenate(rows),
        np.concatenate(cols),
        np.concatenate(vals),
        np.concatenate(lo),
        np.concatenate(up),
    )


def _relation(
    value: FloatArray, upper: FloatArray, cost: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(lo, up) for a column's Aᵀŷ given its value: its reduced cost c − Aᵀy is ≥ 0 at its
    lower bound (0), ≤ 0 at its upper one, = 0 between (and free at both, a fixed column)."""
    size = 1.0 + np.where(np.isfinite(upper), np.abs(upper), 0.0)
    at_lower = value <= AT_BOUND * size
    at_upper = np.isfinite(upper) & (value >= upper - AT_BOUND * size)
    lo = np.where(at_lower, -np.inf, cost)
    up = np.where(at_upper, np.inf, cost)
    return lo, up


def _t_rows(part: Part, index: IntArray, master: MasterAnswer, sigma: float, nl: int) -> _Rows:
    """The linking columns': their entries in the linking rows (with the fixed blocks' share
    through β) and in the free blocks' rows."""
    p, f = part.linking_cols, index.size
    sums = master.sums
    link = part.h + sums.per_t  # (L, P)
    lr, pc = np.nonzero(link)
    rows, cols, vals = [pc], [lr], [link[lr, pc]]
    for r in range(2):
        g = part.g[r][index]  # (F, P)
        fb, pp = np.nonzero(g)
        rows.append(pp)
        cols.append(nl + 2 * fb + r)
        vals.append(g[fb, pp])
    lo, up = _relation(master.t, part.upper_link, (part.cost_link + sums.cost_t) / sigma)
    assert lo.size == p and f >= 0
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), lo, up


def _free_rows(part: Part, index: IntArray, master: MasterAnswer, sigma: float, nl: int) -> _Rows:
    """The free blocks' variables': e0 ŷ_b0 + e1 ŷ_b1 + lv ŷ_l(v) against c_bv / σ."""
    f, v = index.size, part.slots + 2
    rows, cols, vals = [], [], []
    base = np.arange(f) * v
    for var in range(v):
        e0, e1 = part.column(var)
        for r, e in enumerate((e0[index], e1[index])):
            rows.append(base + var)
            cols.append(nl + 2 * np.arange(f) + r)
            vals.append(e)
        if var < part.slots and part.link[var] >= 0:
            rows.append(base + var)
            cols.append(np.full(f, part.link[var]))
            vals.append(part.lv[index, var])
    lo, up = _relation(
        master.x.ravel(), part.upper[index].ravel(), part.cost[index].ravel() / sigma
    )
    absent = ~part.valid[index].ravel()
    lo[absent], up[absent] = -np.inf, np.inf
    r_all, c_all, v_all = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    keep = v_all != 0
    return r_all[keep], c_all[keep], v_all[keep], lo, up


def _cut_rows(
    part: Part,
    bases: Bases,
    blocks_cut: IntArray,
    vars_cut: IntArray,
    sigma: float,
    first_elastic: int,
) -> _Rows:
    """r_bv(y)/σ + e_bv ≥ 0 per cut, r's coefficients read off at y = 0 and at unit prices."""
    nl, m = part.linking_rows, blocks_cut.size
    sub = part.take(blocks_cut, 1.0)
    sub_bases = Bases(bases.u[blocks_cut], bases.v[blocks_cut])
    at = np.arange(m)

    def value(y: FloatArray) -> FloatArray:
        out: FloatArray = reduced(sub, sub_bases, y)[at, vars_cut]
        return out

    const = value(np.zeros(nl))
    coef = np.column_stack([value(np.eye(nl)[k]) - const for k in range(nl)])
    cr, cl = np.nonzero(coef)
    rows = np.concatenate([cr, at])
    cols = np.concatenate([cl, first_elastic + at])
    vals = np.concatenate([coef[cr, cl], np.ones(m)])
    return rows, cols, vals, -const / sigma, np.full(m, np.inf)


def _slack_bounds(part: Part, master: MasterAnswer, n: int) -> tuple[FloatArray, FloatArray]:
    """Column bounds: the linking slacks' reduced costs −σ_l y_l signed by where the slacks
    sit; the free blocks' duals free; the elastic variables ≥ 0."""
    nl = part.linking_rows
    lo, up = np.full(n, -np.inf), np.full(n, np.inf)
    sig = part.sig_link
    # −σ_l y_l against 0: Aᵀy for the slack column is σ_l y_l, within (lo, up) of `_relation`.
    rel_lo, rel_up = _relation(master.link_slack, part.upper_slack_link, np.zeros(nl))
    for k in range(nl):
        if sig[k] == 0:
            continue
        a, b = rel_lo[k] / sig[k], rel_up[k] / sig[k]
        lo[k], up[k] = min(a, b), max(a, b)
    return lo, up
