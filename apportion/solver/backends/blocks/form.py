"""A model of declared block shape (`BlockShape`) in the interior point's own form.

    minimize cᵀx  s.t.  A x = b,  0 ≤ x ≤ u   (u may be +∞)

x stacks, in this order: the blocks' columns as a (blocks × slots) array, the linking columns,
one slack per block row and one per linking row. Each model column is shifted by its lower
bound; a row lo ≤ a x ≤ up becomes a x − s = lo with 0 ≤ s ≤ up − lo (or a x + s = up when lo is
−∞, or no slack when lo = up); a free row is dropped. A maximization is solved as the
minimization of −cᵀx.

The matrix is kept in pieces that follow the shape, so that no product ever touches a zero
the shape rules out: `a` (rows × blocks × slots: each block row's entries contiguous) the
blocks' own entries, `lv` (blocks × slots) each column's entry in the linking row of its slot
(`slot_link`), `g` (rows × blocks × linking columns) and `h` (linking rows × linking columns)
the linking columns' entries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import MAX_LINKING_COLUMNS, BlockShape, CompiledModel, Sense


class ShapeError(ValueError):
    """The model does not have the block shape it declares."""


@dataclass(frozen=True, eq=False)
class BlockForm:
    blocks: int
    rows: int  # per block
    slots: int  # per block
    a: FloatArray  # (R, B, C)
    lv: FloatArray  # (B, C)
    slot_link: IntArray  # (C,), −1: the slot's columns touch no linking row
    g: FloatArray  # (R, B, P)
    h: FloatArray  # (L, P)
    cost: FloatArray  # (n,)
    upper: FloatArray  # (n,), +∞ where unbounded above
    valid: BoolArray  # (n,): padding slots and missing slacks are False
    sig_loc: FloatArray  # (B, R): the slack's coefficient in each block row (0: none)
    sig_link: FloatArray  # (L,)
    rhs_loc: FloatArray  # (B, R)
    rhs_link: FloatArray  # (L,)
    row_valid: BoolArray  # (B, R): rows present and not free
    # The way back to the model:
    lower: FloatArray  # (B·C + P,) the model columns' lower bounds (0 for padding)
    col_index: IntArray  # (B·C + P,) model column of each x entry (−1: padding)
    row_loc: IntArray  # (B, R) model rows (−1: padding or free)
    row_link: IntArray  # (L,)
    sign: float  # −1 for a maximization (its costs negated), else 1
    scale_loc: FloatArray  # (B, R): each row was multiplied by this (see `scaled`)
    scale_link: FloatArray  # (L,)
    scale_cost: float = 1.0  # and the costs by this

    @property
    def offset(self) -> float:
        """cᵀ lo: the objective's part that the shift by the lower bounds takes out of x."""
        n = self.col_index.size
        return float(self.cost[:n] @ self.lower)

    @property
    def linking_rows(self) -> int:
        return int(self.h.shape[0])

    @property
    def linking_cols(self) -> int:
        return int(self.h.shape[1])

    @property
    def size(self) -> int:
        return int(self.cost.size)

    def parts(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(blocks' columns (B, C), linking columns (P,), block slacks (B, R), linking slacks
        (L,)) as views of an x-sized vector."""
        b, c, r, p = self.blocks, self.slots, self.rows, self.linking_cols
        i, j = b * c, b * c + p
        return v[:i].reshape(b, c), v[i:j], v[j : j + b * r].reshape(b, r), v[j + b * r :]

    def times(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """A x as (block rows (B, R), linking rows (L,))."""
        xl, xg, sl, sk = self.parts(x)
        loc = self.sig_loc * sl
        for r in range(self.rows):
            loc[:, r] += np.einsum("bc,bc->b", self.a[r], xl) + self.g[r] @ xg
        per_slot = np.einsum("bc,bc->c", self.lv, xl)
        link = self.h @ xg + self.sig_link * sk + self.scatter(per_slot)
        return loc, link

    def scatter(self, per_slot: FloatArray) -> FloatArray:
        """Per-slot sums into their linking rows."""
        out = np.zeros(self.linking_rows)
        linked = self.slot_link >= 0
        np.add.at(out, self.slot_link[linked], per_slot[linked])
        return out

    def transposed(self, y_loc: FloatArray, y_link: FloatArray) -> FloatArray:
        """Aᵀ y as an x-sized vector, written in place into its parts (no temporaries the
        size of x: this runs five times an iteration)."""
        out = np.empty(self.size)
        xl, xg, sl, sk = self.parts(out)
        gathered = np.append(y_link, 0.0)[self.slot_link]  # −1 reads the appended 0
        np.multiply(self.lv, gathered, out=xl)
        xg[:] = self.h.T @ y_link
        term = np.empty_like(xl)
        for r in range(self.rows):
            np.multiply(self.a[r], y_loc[:, r, None], out=term)
            xl += term
            xg += self.g[r].T @ y_loc[:, r]
        np.multiply(self.sig_loc, y_loc, out=sl)
        np.multiply(self.sig_link, y_link, out=sk)
        return out


def block_form(model: CompiledModel, shape: BlockShape) -> BlockForm:
    """The model in block form; raises `ShapeError` when it does not have its declared shape."""
    rows, cols = np.asarray(shape.rows, np.int64), np.asarray(shape.cols, np.int64)
    nb, nr = rows.shape
    nc = cols.shape[1]
    free = ~np.isfinite(model.row_lower) & ~np.isfinite(model.row_upper)
    row_block = np.full(model.num_rows, -1)
    row_pos = np.full(model.num_rows, -1)
    present = rows >= 0
    row_block[rows[present]] = np.nonzero(present)[0]
    row_pos[rows[present]] = np.nonzero(present)[1]
    link_rows = np.flatnonzero((row_block < 0) & ~free)
    link_index = np.full(model.num_rows, -1)
    link_index[link_rows] = np.arange(link_rows.size)
    in_block = np.zeros(model.num_cols, bool)
    in_block[cols[cols >= 0]] = True
    glob = np.flatnonzero(~in_block)
    if glob.size > MAX_LINKING_COLUMNS:
        raise ShapeError(f"{glob.size} linking columns (at most {MAX_LINKING_COLUMNS})")
    a, lv, slot_link = _block_entries(model, cols, row_block, row_pos, link_index, nr)
    g, h = _linking_entries(model, glob, rows, link_rows, free)
    lower = np.concatenate(
        [np.where(cols >= 0, model.col_lower[cols], 0.0).ravel(), model.col_lower[glob]]
    )
    if not np.all(np.isfinite(lower)):
        raise ShapeError("a column without a finite lower bound")
    col_index = np.concatenate([cols.ravel(), glob])
    row_loc = np.where(present & ~free[rows], rows, -1)
    return _assemble(
        model, nb, nr, nc, a, lv, slot_link, g, h, lower, col_index, row_loc, link_rows
    )


def _block_entries(
    model: CompiledModel,
    cols: IntArray,
    row_block: IntArray,
    row_pos: IntArray,
    link_index: IntArray,
    nr: int,
) -> tuple[FloatArray, FloatArray, IntArray]:
    """(a, lv, slot_link) from the blocks' columns, checking that each touches only its own
    rows and its slot's linking row. Entries are addressed by one flat (block · slots + slot)
    index: a million-job model has tens of millions of them."""
    nb, nc = cols.shape
    bi, ci = np.nonzero(cols >= 0)
    taken = cols[bi, ci]
    matrix = model.matrix if model.matrix.format == "csc" else model.matrix.tocsc()
    if taken.size and taken[-1] - taken[0] == taken.size - 1 and (np.diff(taken) == 1).all():
        # One run of columns: its entries are a slice of the compressed arrays, no copy.
        start, stop = matrix.indptr[taken[0]], matrix.indptr[taken[-1] + 1]
        counts = np.diff(matrix.indptr[taken[0] : taken[-1] + 2])
        er, ev = matrix.indices[start:stop], matrix.data[start:stop]
    else:
        sub = matrix[:, taken].tocsc()
        counts, er, ev = np.diff(sub.indptr), sub.indices, sub.data
    at = np.repeat(bi * nc + ci, counts)  # each entry's (block, slot), flat
    own = row_block[er] == at // nc
    links = link_index[er]
    linked = ~own & (links >= 0)
    if not (own | linked | (ev == 0)).all():
        raise ShapeError("a block's column has an entry in another block's rows")
    a = np.zeros((nr, nb, nc))
    a.reshape(-1)[row_pos[er[own]] * (nb * nc) + at[own]] = ev[own]
    la, ll = at[linked], links[linked]
    if la.size and np.bincount(la).max() > 1:
        raise ShapeError("a block's column has entries in two linking rows")
    lv = np.zeros((nb, nc))
    lv.reshape(-1)[la] = ev[linked]
    lc = la % nc
    slot_link = np.full(nc, -1, dtype=np.int64)
    slot_link[lc] = ll
    if (slot_link[lc] != ll).any():
        raise ShapeError("columns in one slot have entries in different linking rows")
    return a, lv, slot_link


def _linking_entries(
    model: CompiledModel, glob: IntArray, rows: IntArray, link_rows: IntArray, free: BoolArray
) -> tuple[FloatArray, FloatArray]:
    """(g, h): the linking columns' entries in the block rows and in the linking rows."""
    nb, nr = rows.shape
    sub = model.matrix[:, glob].tocoo()
    keep = ~free[sub.row]
    er, ep, ev = sub.row[keep], sub.col[keep], sub.data[keep]
    g = np.zeros((nr, nb, glob.size))
    h = np.zeros((link_rows.size, glob.size))
    where = np.full(model.num_rows, -1)
    present = rows >= 0
    bi, ri = np.nonzero(present)
    where[rows[bi, ri]] = ri * nb + bi  # (row, block) order, as g
    local = where[er] >= 0
    g.reshape(nr * nb, glob.size)[where[er[local]], ep[local]] = ev[local]
    link_index = np.full(model.num_rows, -1)
    link_index[link_rows] = np.arange(link_rows.size)
    h[link_index[er[~local]], ep[~local]] = ev[~local]
    return g, h


def _assemble(
    model: CompiledModel,
    nb: int,
    nr: int,
    nc: int,
    a: FloatArray,
    lv: FloatArray,
    slot_link: IntArray,
    g: FloatArray,
    h: FloatArray,
    lower: FloatArray,
    col_index: IntArray,
    row_loc: IntArray,
    row_link: IntArray,
) -> BlockForm:
    sign = -1.0 if model.sense is Sense.MAXIMIZE else 1.0
    padded = col_index < 0
    cols = np.maximum(col_index, 0)
    cost_x = np.where(padded, 0.0, sign * model.cost[cols])
    upper_x = np.where(padded, 0.0, model.col_upper[cols] - lower)
    shift = model.matrix @ model.col_lower
    rows = np.concatenate([row_loc.ravel(), row_link])
    present = rows >= 0
    at = np.maximum(rows, 0)
    lo = np.where(present, model.row_lower[at] - shift[at], 0.0)
    up = np.where(present, model.row_upper[at] - shift[at], 0.0)
    equal = present & (lo == up)
    below = present & ~equal & np.isfinite(lo)
    sig = np.where(below, -1.0, np.where(present & ~equal, 1.0, 0.0))
    rhs = np.where(below | equal, lo, up)
    slack_upper = np.where(below, up - lo, np.inf)
    n_loc = nb * nr
    cost = np.concatenate([cost_x, np.zeros(rows.size)])
    upper = np.concatenate([upper_x, np.where(sig != 0, slack_upper, 0.0)])
    valid = np.concatenate([~padded & (upper_x > 0), sig != 0])
    return BlockForm(
        blocks=nb,
        rows=nr,
        slots=nc,
        a=a,
        lv=lv,
        slot_link=slot_link,
        g=g,
        h=h,
        cost=cost,
        upper=upper,
        valid=valid,
        sig_loc=sig[:n_loc].reshape(nb, nr),
        sig_link=sig[n_loc:],
        rhs_loc=rhs[:n_loc].reshape(nb, nr),
        rhs_link=rhs[n_loc:],
        row_valid=present[:n_loc].reshape(nb, nr),
        lower=lower,
        col_index=col_index,
        row_loc=row_loc,
        row_link=row_link,
        sign=sign,
        scale_loc=np.ones((nb, nr)),
        scale_link=np.ones(row_link.size),
    )


def scaled(form: BlockForm) -> BlockForm:
    """The same problem with the costs divided by the largest and each row multiplied by
    1 / max(1, |b_i|, max_j |a_ij|), so that costs, right-hand sides and slacks are of order
    one: a capacity row's N_k in the thousands next
    to time rows of 1 otherwise makes every step a sliver (the interior point's steps are
    measured in the same units for every row). Each slack keeps its row's units."""
    a_max = np.abs(form.a).max(axis=2, initial=0.0).T
    g_max = np.abs(form.g).max(axis=2, initial=0.0).T
    s_loc = 1.0 / np.maximum.reduce([np.ones_like(a_max), np.abs(form.rhs_loc), a_max, g_max])
    per_slot = np.abs(form.lv).max(axis=0, initial=0.0)
    link_max = np.abs(form.h).max(axis=1, initial=0.0)
    linked = form.slot_link >= 0
    np.maximum.at(link_max, form.slot_link[linked], per_slot[linked])
    s_link = 1.0 / np.maximum.reduce([np.ones_like(link_max), np.abs(form.rhs_link), link_max])
    gathered = np.append(s_link, 1.0)[form.slot_link]
    nx = form.blocks * form.slots + form.linking_cols
    slack_scale = np.concatenate([s_loc.ravel(), s_link])
    upper = form.upper.copy()
    upper[nx:] = upper[nx:] * slack_scale
    s_cost = 1.0 / max(float(np.abs(form.cost).max(initial=0.0)), 1e-300)
    return replace(
        form,
        cost=form.cost * s_cost,
        scale_cost=s_cost,
        a=form.a * s_loc.T[:, :, None],
        g=form.g * s_loc.T[:, :, None],
        lv=form.lv * gathered[None, :],
        h=form.h * s_link[:, None],
        rhs_loc=form.rhs_loc * s_loc,
        rhs_link=form.rhs_link * s_link,
        upper=upper,
        scale_loc=s_loc,
        scale_link=s_link,
    )


def model_point(form: BlockForm, model: CompiledModel, x: FloatArray) -> FloatArray:
    """The model's columns from the form's x (shifted back by the lower bounds)."""
    out = model.col_lower.copy()
    n = form.col_index.size
    taken = form.col_index >= 0
    out[form.col_index[taken]] = x[:n][taken] + form.lower[taken]
    return out


def model_duals(
    form: BlockForm, model: CompiledModel, y_loc: FloatArray, y_link: FloatArray
) -> FloatArray:
    """Row duals in the model's convention (HiGHS's: a binding ≤ row of a maximization has a
    non-negative dual); 0 for free rows."""
    out = np.zeros(model.num_rows)
    taken = form.row_loc >= 0
    sign = form.sign / form.scale_cost
    out[form.row_loc[taken]] = sign * (y_loc * form.scale_loc)[taken]
    out[form.row_link] = sign * y_link * form.scale_link
    return out
