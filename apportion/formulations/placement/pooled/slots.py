"""Slot rows, for a family that may start two jobs or more.

The s_f − t_fl jobs that stay below level L_l fill all k_f of their slots with pieces below it,
and a node n below it gives them at most min(u_fn, T_fn − t_fl) pieces (a job holds n once, and
the jobs holding n reach n's own level: T_fn of them, t at R_αn's level or s_f):
    k_f (s_f − t_fl) ≤ Σ_{n: R_αn < L_l} m_fnl,   m_fnl ≤ u_fn,   m_fnl ≤ T_fn − t_fl
(m_fnl stands for u_fn where n takes one piece at most). Without them the relaxation packs a
family's contended pieces into fewer jobs than the nodes every job must use leave room for.
With the lifted rows (`met`), pieces a candidate lifts to the level come off what the jobs
below it can use: m_fnl ≤ u_fn − w_fn,≥L_l.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.families import Families
from apportion.formulations.placement.pooled.met import Met
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model


@dataclass
class _Slots:
    """One slot row per (family, level) of a family of two jobs or more."""

    t_row: IntArray  # per row: its t column
    small: tuple[IntArray, IntArray]  # (row, pair) counted with u
    big: tuple[IntArray, IntArray, IntArray]  # (row, pair, T column or −1 for s) counted with m
    lifted: tuple[IntArray, IntArray]  # (row, w column): pieces a candidate lifts to the level


def _slots(
    fam: Families, t_family: IntArray, t_level: FloatArray, r_pair: FloatArray, met: Met | None
) -> _Slots | None:
    row_t: list[int] = []
    lifted: list[tuple[int, int]] = []
    small: list[tuple[int, int]] = []
    big: list[tuple[int, int, int]] = []
    for i, (f, level) in enumerate(zip(t_family.tolist(), t_level.tolist(), strict=True)):
        if fam.size[f] < 2:
            continue
        mine = fam.pairs_of[f]
        below = mine[r_pair[mine] < level]
        columns = np.flatnonzero(t_family == f)  # f's levels, ascending
        # T_fn: the column of n's own level (every R_αn > 1 is one of f's levels), or −1 for s.
        at = np.searchsorted(t_level[columns], r_pair[below] - 1e-12)
        own = np.where(r_pair[below] > 1.0, columns[np.minimum(at, columns.size - 1)], -1)
        wide = fam.pair_upper[below] >= 2
        # Where no node below takes two pieces the row restates the rounded one. It stays: on
        # twenty trace snapshots, dropping those rows made the search slower, not faster.
        row = len(row_t)
        row_t.append(i)
        small.extend((row, q) for q in below[~wide].tolist())
        if met is not None:
            _, cols = met.columns(below, level)
            lifted.extend((row, c) for c in cols.tolist())
        big.extend(
            zip([row] * int(wide.sum()), below[wide].tolist(), own[wide].tolist(), strict=True)
        )
    if not row_t:
        return None
    s_row, s_pair = np.array(small, dtype=np.int64).reshape(-1, 2).T
    m_row, m_pair, m_own = np.array(big, dtype=np.int64).reshape(-1, 3).T
    l_row, l_col = np.array(lifted, dtype=np.int64).reshape(-1, 2).T
    return _Slots(
        np.array(row_t, dtype=np.int64), (s_row, s_pair), (m_row, m_pair, m_own), (l_row, l_col)
    )


def slot_rows(
    model: Model,
    fam: Families,
    s: Block,
    u: Block,
    t: Block,
    t_family: IntArray,
    t_level: FloatArray,
    r_pair: FloatArray,
    met: Met | None,
) -> None:
    """k_f (s_f − t_fl) ≤ Σ_{n: R_αn < L_l} m_fnl with m_fnl ≤ u_fn, m_fnl ≤ T_fn − t_fl,
    for families that may start two jobs or more (m_fnl = u_fn where b_fn = 1)."""
    slots = _slots(fam, t_family, t_level, r_pair, met)
    if slots is None:
        return
    ti = slots.t_row
    n_rows, n_m = ti.size, slots.big[0].size
    k = fam.nodes[t_family[ti]].astype(float)
    rows = np.arange(n_rows)
    s_row, s_pair = slots.small
    terms = {
        s: matrix(rows, t_family[ti], k, (n_rows, s.size)),
        t: matrix(rows, ti, -k, (n_rows, t.size)),
        u: matrix(s_row, s_pair, -1.0, (n_rows, u.size)),
    }
    # Pieces a candidate lifts to the level are not there for the jobs below it: they come off
    # a node's count (u − w), whether it enters the row directly or through m.
    l_row, l_col = slots.lifted
    l_pair = met.pair[l_col] if met is not None else l_col
    direct = np.isin(l_pair, s_pair)
    if met is not None and direct.any():
        terms[met.block] = matrix(l_row[direct], l_col[direct], 1.0, (n_rows, met.block.size))
    if not n_m:
        model.add_constraints("slots_fill", terms, upper=0.0)
        return
    m = model.add_variables("slots", n_m)
    terms[m] = matrix(slots.big[0], np.arange(n_m), -1.0, (n_rows, n_m))
    model.add_constraints("slots_fill", terms, upper=0.0)
    _piece_rows(model, u, m, slots, met, ~direct)
    _job_rows(model, s, t, m, slots, t_family)


def _piece_rows(
    model: Model, u: Block, m: Block, slots: _Slots, met: Met | None, through_m: NDArray[np.bool_]
) -> None:
    """m_fnl ≤ u_fn (− w_fn,≥L_l where a candidate lifts pieces of n to the level)."""
    m_row, m_pair, _ = slots.big
    n_m = m.size
    each = np.arange(n_m)
    pieces = {m: sp.identity(n_m, format="csr"), u: matrix(each, m_pair, -1.0, (n_m, u.size))}
    if met is not None and through_m.any():
        l_row, l_col = slots.lifted
        l_pair = met.pair[l_col]
        # the m column of each (row, pair) a lifted cell belongs to
        m_of = {key: j for j, key in enumerate(zip(m_row.tolist(), m_pair.tolist(), strict=True))}
        at = [
            m_of[key]
            for key in zip(l_row[through_m].tolist(), l_pair[through_m].tolist(), strict=True)
        ]
        pieces[met.block] = matrix(np.array(at), l_col[through_m], 1.0, (n_m, met.block.size))
    model.add_constraints("slots_pieces", pieces, upper=0.0)


def _job_rows(
    model: Model, s: Block, t: Block, m: Block, slots: _Slots, t_family: IntArray
) -> None:
    """m_fnl ≤ T_fn − t_fl: the jobs below the level that can hold node n."""
    m_row, _, m_own = slots.big
    ti = slots.t_row
    n_m = m.size
    each = np.arange(n_m)
    via_t = m_own >= 0
    model.add_constraints(
        "slots_jobs",
        {
            m: sp.identity(n_m, format="csr"),
            t: matrix(each, ti[m_row], 1.0, (n_m, t.size))
            - matrix(each[via_t], m_own[via_t], 1.0, (n_m, t.size)),
            s: matrix(each[~via_t], t_family[ti[m_row[~via_t]]], -1.0, (n_m, s.size)),
        },
        upper=0.0,
    )
