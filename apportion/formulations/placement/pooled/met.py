"""Lifted rows (`build(..., lifted=True)`): a piece below level L_l by R_αn may meet a candidate
co-runner at or above it.

    w_qv ≥ u_q − b_q (1 − h_βn)   for the triggers β of pair q = (f, n) with CS(α|β) ≥ v
counts such pieces (at its lower bound w_qv is u_q or 0), the rounded rows count them with the
pieces at or above the level by R,
    k_f t_fl ≥ Σ_{n: R_αn ≥ L_l} u_fn + Σ_{n: R_αn < L_l} w_fn,≥L_l
and the slot rows (`slots`) take them off what the jobs below the level can use
(m_fnl ≤ u_fn − w_fn,≥L_l).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.colocation import Colocation, Triggers
from apportion.formulations.placement.pooled.families import Families
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model


@dataclass
class Met:
    """w_qv ≥ 0: pieces of (family, node) pair q that meet a candidate co-runner of CS ≥ v there
    (one per pair and trigger value, sorted by pair then value): w_qv ≥ u_q − b_q (1 − h_βn) for
    each trigger β of q with CS(α|β) ≥ v, so at its lower bound it is u_q or 0."""

    block: Block
    pair: IntArray
    value: FloatArray

    def columns(self, pairs: IntArray, level: float) -> tuple[IntArray, IntArray]:
        """(pair, column) for each of `pairs` with a cell at or above `level`: the cell with the
        smallest such value, which counts the pair's pieces at or above the level."""
        which = np.flatnonzero(np.isin(self.pair, pairs) & (self.value >= level - 1e-12))
        _, first = np.unique(self.pair[which], return_index=True)
        return self.pair[which[first]], which[first]


def met_cells(
    model: Model, fam: Families, u: Block, triggers: Triggers, h: Colocation, h2: Colocation
) -> Met | None:
    """The w cells of `Met` and their rows."""
    if not triggers.family.size:
        return None
    order = np.lexsort((triggers.value, triggers.pair))
    keys = np.stack([triggers.pair[order], triggers.value[order]])
    _, first = np.unique(keys, axis=1, return_index=True)
    cell_trigger = order[np.sort(first)]
    pair, value = triggers.pair[cell_trigger], triggers.value[cell_trigger]
    # (cell, trigger) for every trigger of the cell's pair at or above the cell's value
    lo = np.searchsorted(pair, triggers.pair, side="left")
    hi = np.searchsorted(pair, triggers.pair, side="right")
    member_trigger = np.repeat(np.arange(triggers.pair.size), hi - lo)
    member_cell = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])
    keep = value[member_cell] <= triggers.value[member_trigger] + 1e-12
    member_cell, member_trigger = member_cell[keep], member_trigger[keep]
    w = model.add_variables("lifted_pieces", pair.size, upper=fam.pair_upper[pair].astype(float))
    node = fam.pair_node[triggers.pair]
    alpha = fam.config[triggers.family]
    b = fam.pair_upper[triggers.pair].astype(float)
    n = member_cell.size
    rows = np.arange(n)
    terms = {
        w: matrix(rows, member_cell, 1.0, (n, w.size)),
        u: matrix(rows, triggers.pair[member_trigger], -1.0, (n, u.size)),
    }
    other = triggers.beta != alpha
    for cells, sel, cfg in ((h, other, triggers.beta), (h2, ~other, alpha)):
        mine = sel[member_trigger]
        tr = member_trigger[mine]
        if cells.block is not None:
            terms[cells.block] = matrix(
                rows[mine], cells.index[cfg[tr], node[tr]], -b[tr], (n, cells.block.size)
            )
    model.add_constraints("lifted_link", terms, lower=-b[member_trigger])
    return Met(w, pair, value)


def met_rounded_rows(
    model: Model,
    fam: Families,
    u: Block,
    t: Block,
    t_family: IntArray,
    t_level: FloatArray,
    r_pair: FloatArray,
    met: Met,
) -> None:
    """k_f t_fl ≥ Σ_{n: R_αn ≥ L_l} u_fn + Σ_{n: R_αn < L_l} w_n,≥L_l where a candidate can
    lift pieces below L_l to it."""
    rows_t: list[int] = []
    u_rows: list[IntArray] = []
    u_cols: list[IntArray] = []
    w_rows: list[IntArray] = []
    w_cols: list[IntArray] = []
    for i, (f, level) in enumerate(zip(t_family.tolist(), t_level.tolist(), strict=True)):
        mine = fam.pairs_of[f]
        _, cols = met.columns(mine[r_pair[mine] < level], level)
        if not cols.size:
            continue
        row = len(rows_t)
        rows_t.append(i)
        high = mine[r_pair[mine] >= level]
        u_rows.append(np.full(high.size, row))
        u_cols.append(high)
        w_rows.append(np.full(cols.size, row))
        w_cols.append(cols)
    if not rows_t:
        return
    ti = np.array(rows_t, dtype=np.int64)
    n_rows = ti.size
    k = fam.nodes[t_family[ti]].astype(float)
    model.add_constraints(
        "lifted_rounded",
        {
            t: matrix(np.arange(n_rows), ti, k, (n_rows, t.size)),
            u: matrix(np.concatenate(u_rows), np.concatenate(u_cols), -1.0, (n_rows, u.size)),
            met.block: matrix(
                np.concatenate(w_rows), np.concatenate(w_cols), -1.0, (n_rows, met.block.size)
            ),
        },
        lower=0.0,
    )
