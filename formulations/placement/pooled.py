"""The pooled placement model: worst-co-runner penalty, single-node jobs free of contention
(DeepShare's scope). A relaxation of `placement_model` + `placement_worst` that is usually tight
and several times smaller (no copy per candidate, so no symmetric copies to search); its bound
holds for the full problem, and `placement_solve` uses it to prove placements it evaluates
independently, falling back to the per-candidate model when the bound stays above them.

Interchangeable candidates are not told apart. A *family* f = (group g of m_g interchangeable
candidates, shape k_f × p_f, GPU type) has
    s_f ∈ ℤ₊                      jobs of the group started with that shape
    u_fn ∈ ℤ₊, u_fn ≤ b_fn        their pieces on node n   (b_fn = min(m_g, ⌊F_n / p_f⌋))
    Σ_n u_fn = k_f s_f            k pieces per job
    u_fn ≤ s_f                    a job uses a node at most once
    Σ_{f∈g} s_f ≤ m_g             the group's size
    Σ_f p_f u_fn ≤ F_n            free GPUs
What a family's jobs suffer: E_fn, the worst CS a piece of f on n meets, is R_αn (running jobs,
α = α_f) or CS(α|β) once a candidate of configuration β shares n. With levels L_1 < L_2 < … of
the values E_fn can take and t_fl the number of f's jobs whose worst piece reaches L_l,
    Σ_{jobs of f} (CS_j − 1) = Σ_l (L_l − L_{l−1}) t_fl            (L_0 = 1)
    t_fl ≥ t_f,l+1,  t_fl ≤ s_f,  t_fl ∈ ℤ₊
    t_fl ≥ u_fn                 for n with R_αn at level l (every piece on n is another job)
    t_fl ≥ Σ_{n: R_αn ≥ L_l} u_fn / k_f                   (k pieces per job, rounded up)
    t_fl ≥ y_fnβ ≥ u_fn − b_fn (1 − h_βn)   for CS(α|β) at level l, h_βn = 1 when a piece of
                                            configuration β (another one, if β = α) is on n
What running job r suffers, with K_r from its running co-runners and levels L_r1 < … of the
CS(α_r | α_f) above K_r:
    CS_r = K_r + Σ_l (L_rl − L_r,l−1) z_rl,  z_rl ≥ z_r,l+1,  z_rl ≥ u_fn / b_fn
                                            (n a node of r, CS(α_r|α_f) ≥ L_rl)
Slot rows, for a family that may start two jobs or more: the s_f − t_fl jobs that stay below
L_l fill all k_f of their slots with pieces below it, and a node n below it gives them at most
min(u_fn, T_fn − t_fl) pieces (a job holds n once, and the jobs holding n reach n's own level:
T_fn of them, t at R_αn's level or s_f):
    k_f (s_f − t_fl) ≤ Σ_{n: R_αn < L_l} m_fnl,   m_fnl ≤ u_fn,   m_fnl ≤ T_fn − t_fl
(m_fnl stands for u_fn where n takes one piece at most). Without them the relaxation packs a
family's contended pieces into fewer jobs than the nodes every job must use leave room for.
Lifted rows (`build(..., lifted=True)`): a piece below L_l by R_αn may meet a candidate co-runner
at or above it. w_qv ≥ u_q − b_q (1 − h_βn) for the triggers β of pair q with CS(α|β) ≥ v counts
such pieces, the rounded rows count them with the high ones, and the slot rows take them off
what the jobs below the level can use (m_fnl ≤ u_fn − w_fn,≥L_l).
Each row holds for every real placement (it counts jobs or pieces from below), so the optimum
is an upper bound on the true one. `decode` groups each family's pieces into jobs, worst pieces
together (in order when the nodes stay distinct, else by a small assignment MILP).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import Bounds, LinearConstraint, milp

from formulations.placement.evaluate import evaluate
from formulations.placement.instance import Instance
from formulations.placement.model import matrix
from formulations.placement.running import running_floor, running_worst
from solver.model import Block, Model, Sense

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
Started = dict[int, tuple[int, list[int]]]


@dataclass
class Families:
    """Families and their (family, node) pairs, with the option row each family starts with."""

    option: IntArray  # a representative option row (k, p, type, config of the family)
    group: IntArray
    nodes: IntArray  # k
    per_node: IntArray  # p
    config: IntArray
    demand: IntArray
    size: IntArray  # m_g
    pair_family: IntArray
    pair_node: IntArray
    pair_upper: IntArray  # b_fn

    @property
    def count(self) -> int:
        return int(self.option.size)

    @cached_property
    def pairs_of(self) -> list[IntArray]:
        """Each family's (family, node) pair indices, ascending: the rows read them per level."""
        cuts = np.searchsorted(self.pair_family, np.arange(1, self.count))
        return np.split(np.arange(self.pair_family.size), cuts)


@dataclass
class Pooled:
    model: Model
    families: Families
    s: Block
    u: Block
    own: Counters
    running: Counters


@dataclass
class Counters:
    """Level counters (t of a family, or z of a running job): the block, whose counter each
    column is and the level it counts, and the indicators the rows need."""

    block: Block | None
    owner: IntArray  # family (t) or running job position (z)
    level: FloatArray
    delta: FloatArray  # L_l − L_{l−1}: the objective weight
    h: Colocation | None = None
    h2: Colocation | None = None
    met: Met | None = None


# Grouping a family's pieces into jobs is a tiny MILP, but a family of many jobs can make it
# slow; past this the best grouping found (or a round-robin deal) is used. A worse grouping only
# lowers the placement's true value: the bound test then decides, nothing is claimed wrongly.
GROUPING_SECONDS = 0.05


def families(inst: Instance) -> Families:
    opts = inst.options
    group = inst.group[opts.candidate]
    keys = np.stack([group, opts.nodes, opts.per_node, opts.gpu_type])
    _, first = np.unique(keys, axis=1, return_index=True)
    option = np.sort(first)
    size = np.bincount(inst.group)[group[option]]
    eligible = (inst.node_type[None, :] == opts.gpu_type[option][:, None]) & (
        inst.free[None, :] >= opts.per_node[option][:, None]
    )
    pair_family, pair_node = np.nonzero(eligible)
    upper = np.minimum(
        size[pair_family], inst.free[pair_node] // opts.per_node[option][pair_family]
    )
    return Families(
        option=option,
        group=group[option],
        nodes=opts.nodes[option],
        per_node=opts.per_node[option],
        config=opts.config[option],
        demand=inst.demand[opts.candidate[option]],
        size=size,
        pair_family=pair_family,
        pair_node=pair_node,
        pair_upper=upper,
    )


def build(inst: Instance, w1: float, modeled: BoolArray, lifted: bool = False) -> Pooled:
    """maximize W2·U − W1·Φ over the rows of the module docstring; candidate co-runner rows only
    for the configuration pairs in `modeled`; with `lifted`, the rows that count pieces at or
    above a level also count those a candidate co-runner lifts there (`Met`)."""
    fam = families(inst)
    model = Model("contention_placement_pooled")
    s, u = placement_rows(model, inst, fam)
    own = _own_rows(model, inst, fam, s, u, modeled, lifted)
    running = _running_rows(model, inst, fam, u)
    m, total = inst.num_jobs, inst.total_gpus
    w2 = 1.0 - w1
    g_running = sum(int(g.sum()) for g in inst.running_gpus)
    terms: dict[Block, FloatArray] = {s: w2 * fam.demand / total}
    for counters in (own, running):
        if counters.block is not None:
            terms[counters.block] = -w1 * counters.delta / m
    # Every candidate counts 1 (waiting, or started before its excess), running jobs K_r.
    constant = float(running_floor(inst).sum()) + inst.candidates.size
    offset = w2 * g_running / total - w1 * constant / m
    model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
    return Pooled(model, fam, s, u, own, running)


def placement_rows(model: Model, inst: Instance, fam: Families) -> tuple[Block, Block]:
    """s and u with the rows every placement meets: shape, distinct nodes, group size and
    free GPUs."""
    n_fam, n_pair, n_node = fam.count, fam.pair_family.size, len(inst.node_ids)
    s = model.add_variables("starts", n_fam, upper=fam.size.astype(float), integer=True)
    u = model.add_variables("pieces", n_pair, upper=fam.pair_upper.astype(float), integer=True)
    pairs = np.arange(n_pair)
    model.add_constraints(
        "shape",
        {
            u: matrix(fam.pair_family, pairs, 1.0, (n_fam, n_pair)),
            s: sp.diags(-fam.nodes.astype(float)),
        },
        lower=0.0,
        upper=0.0,
    )
    multi = np.flatnonzero(fam.nodes[fam.pair_family] > 1)
    model.add_constraints(
        "distinct_nodes",
        {
            u: matrix(np.arange(multi.size), multi, 1.0, (multi.size, n_pair)),
            s: matrix(np.arange(multi.size), fam.pair_family[multi], -1.0, (multi.size, n_fam)),
        },
        upper=0.0,
    )
    groups, row = np.unique(fam.group, return_inverse=True)
    model.add_constraints(
        "group_size",
        {s: matrix(row.reshape(-1), np.arange(n_fam), 1.0, (groups.size, n_fam))},
        upper=np.bincount(inst.group)[groups].astype(float),
    )
    model.add_constraints(
        "capacity",
        {u: matrix(fam.pair_node, pairs, fam.per_node[fam.pair_family], (n_node, n_pair))},
        upper=inst.free.astype(float),
    )
    return s, u


def _chain_rows(model: Model, name: str, counters: Block, chain: list[int]) -> None:
    """counter_i ≥ counter_{i+1} for each i in `chain`: a job that reaches a level reaches every
    level below it."""
    if not chain:
        return
    c = np.array(chain)
    rows = np.arange(c.size)
    shape = (c.size, counters.size)
    model.add_constraints(
        name,
        {counters: matrix(rows, c, 1.0, shape) - matrix(rows, c + 1, 1.0, shape)},
        lower=0.0,
    )


def _levels(values: FloatArray) -> tuple[FloatArray, IntArray]:
    """Distinct values and each value's level index."""
    levels, index = np.unique(values, return_inverse=True)
    return levels, index.reshape(-1)


def _own_rows(
    model: Model,
    inst: Instance,
    fam: Families,
    s: Block,
    u: Block,
    modeled: BoolArray,
    lifted: bool,
) -> Counters:
    """The t rows: level counters of what each multi-node family's jobs suffer."""
    base = running_worst(inst)
    r_pair = base[fam.config[fam.pair_family], fam.pair_node]
    triggers = _candidate_triggers(inst, fam, base, modeled)
    h, h2 = _colocation(model, inst, fam, u, triggers)
    t_family: list[int] = []
    t_delta: list[float] = []
    t_level: list[float] = []
    link: list[tuple[IntArray, IntArray]] = []  # (t index, pair) with t ≥ u
    ceil: list[tuple[IntArray, IntArray, float]] = []  # (t index, pairs, 1/k)
    chain: list[int] = []  # t index i with t_i ≥ t_{i+1}
    trig_t = np.zeros(triggers.family.size, dtype=np.int64)  # per trigger: its t index
    for f in np.flatnonzero(fam.nodes > 1).tolist():
        mine = fam.pairs_of[f]
        cand = np.flatnonzero(triggers.family == f)
        values = np.concatenate([r_pair[mine], triggers.value[cand]])
        levels, index = _levels(values[values > 1.0])
        if not levels.size:
            continue
        start = len(t_family)
        t_family.extend([f] * levels.size)
        t_delta.extend(np.diff(levels, prepend=1.0).tolist())
        t_level.extend(levels.tolist())
        chain.extend(range(start, start + levels.size - 1))
        above = r_pair[mine] > 1.0
        link.append((start + index[: above.sum()], mine[above]))
        trig_t[cand] = start + index[above.sum() :]
        for lvl, level in enumerate(levels.tolist()):
            ceil.append((np.array([start + lvl]), mine[r_pair[mine] >= level], 1.0 / fam.nodes[f]))
    if not t_family:
        return Counters(None, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), h, h2)
    tf = np.array(t_family)
    n_t, n_pair = tf.size, fam.pair_family.size
    t = model.add_variables(
        "excess_jobs",
        n_t,
        upper=fam.size[tf].astype(float),
        integer=True,
        coords=(("family", tf.tolist()),),
    )
    rows, cols = np.concatenate([a for a, _ in link]), np.concatenate([b for _, b in link])
    model.add_constraints(
        "excess_piece",
        {
            t: matrix(np.arange(rows.size), rows, 1.0, (rows.size, n_t)),
            u: matrix(np.arange(rows.size), cols, -1.0, (rows.size, n_pair)),
        },
        lower=0.0,
    )
    _chain_rows(model, "excess_chain", t, chain)
    c_rows = np.concatenate([np.repeat(r, p.size) for r, p, _ in ceil])
    c_cols = np.concatenate([p for _, p, _ in ceil])
    c_vals = np.concatenate([np.full(p.size, k) for _, p, k in ceil])
    model.add_constraints(
        "excess_rounded",
        {
            t: sp.identity(n_t, format="csr"),
            u: matrix(c_rows, c_cols, -c_vals, (n_t, n_pair)),
        },
        lower=0.0,
    )
    model.add_constraints(
        "excess_at_most_started",
        {t: sp.identity(n_t, format="csr"), s: matrix(np.arange(n_t), tf, -1.0, (n_t, s.size))},
        upper=0.0,
    )
    if triggers.family.size:
        _trigger_rows(model, fam, u, t, trig_t, triggers, h, h2)
    levels_of = np.array(t_level)
    met = _met_cells(model, fam, u, triggers, h, h2) if lifted else None
    _slot_rows(model, fam, s, u, t, tf, levels_of, r_pair, met)
    if met is not None:
        _met_rounded_rows(model, fam, u, t, tf, levels_of, r_pair, met)
    return Counters(t, tf, levels_of, np.array(t_delta), h, h2, met)


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


def _met_cells(
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


def _met_rounded_rows(
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


def _slot_rows(
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
    """Slot rows: k_f (s_f − t_fl) ≤ Σ_{n: R_αn < L_l} m_fnl with m_fnl ≤ u_fn, m_fnl ≤ T_fn − t_fl,
    for families that may start two jobs or more (m_fnl = u_fn where b_fn = 1)."""
    row_t: list[int] = []  # per row: its t column
    lifted: list[tuple[int, int]] = []  # (row, w column): pieces a candidate lifts to the level
    small: list[tuple[int, int]] = []  # (row, pair) counted with u
    big: list[tuple[int, int, int]] = []  # (row, pair, T column or −1 for s) counted with m
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
        return
    n_rows, n_m = len(row_t), len(big)
    ti = np.array(row_t, dtype=np.int64)
    k = fam.nodes[t_family[ti]].astype(float)
    rows = np.arange(n_rows)
    s_row, s_pair = np.array(small, dtype=np.int64).reshape(-1, 2).T
    m_row, m_pair, m_own = np.array(big, dtype=np.int64).reshape(-1, 3).T
    terms = {
        s: matrix(rows, t_family[ti], k, (n_rows, s.size)),
        t: matrix(rows, ti, -k, (n_rows, t.size)),
        u: matrix(s_row, s_pair, -1.0, (n_rows, u.size)),
    }
    # Pieces a candidate lifts to the level are not there for the jobs below it: they come off
    # a node's count (u − w), whether it enters the row directly or through m.
    l_row, l_col = np.array(lifted, dtype=np.int64).reshape(-1, 2).T
    l_pair = met.pair[l_col] if met is not None else l_col
    direct = np.isin(l_pair, s_pair)
    if met is not None and direct.any():
        terms[met.block] = matrix(l_row[direct], l_col[direct], 1.0, (n_rows, met.block.size))
    if not n_m:
        model.add_constraints("slots_fill", terms, upper=0.0)
        return
    m = model.add_variables("slots", n_m)
    terms[m] = matrix(m_row, np.arange(n_m), -1.0, (n_rows, n_m))
    model.add_constraints("slots_fill", terms, upper=0.0)
    each = np.arange(n_m)
    pieces = {m: sp.identity(n_m, format="csr"), u: matrix(each, m_pair, -1.0, (n_m, u.size))}
    if met is not None and (~direct).any():
        # the m column of each (row, pair) a lifted cell belongs to
        m_of = {key: j for j, key in enumerate(zip(m_row.tolist(), m_pair.tolist(), strict=True))}
        at = [
            m_of[key] for key in zip(l_row[~direct].tolist(), l_pair[~direct].tolist(), strict=True)
        ]
        pieces[met.block] = matrix(np.array(at), l_col[~direct], 1.0, (n_m, met.block.size))
    model.add_constraints("slots_pieces", pieces, upper=0.0)
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


@dataclass
class Triggers:
    """Candidate co-runner cases: family f's pieces on node n meet configuration β there."""

    family: IntArray
    pair: IntArray  # (family, node) pair index
    beta: IntArray
    value: FloatArray  # CS(α_f | β)


def _candidate_triggers(
    inst: Instance, fam: Families, base: FloatArray, modeled: BoolArray
) -> Triggers:
    multi = fam.nodes > 1
    present = np.zeros((len(inst.configs), len(inst.node_ids)), bool)
    sel = multi[fam.pair_family]
    present[fam.config[fam.pair_family[sel]], fam.pair_node[sel]] = True
    size = np.zeros(len(inst.configs), dtype=np.int64)
    size[fam.config] = fam.per_node
    pair = np.flatnonzero(sel)
    alpha, node = fam.config[fam.pair_family[pair]], fam.pair_node[pair]
    # (pair, β): β present on the node, modeled, both fit together, and worse than R.
    hurts = (
        present[:, node].T
        & modeled[alpha]
        & (inst.cs[alpha] > base[alpha, node][:, None])
        & ((size[alpha][:, None] + size[None, :]) <= inst.free[node][:, None])
    )
    which, beta = np.nonzero(hurts)
    return Triggers(
        family=fam.pair_family[pair[which]],
        pair=pair[which],
        beta=beta,
        value=inst.cs[alpha[which], beta],
    )


@dataclass
class Colocation:
    """h_βn (a piece of configuration β on n) or h2_αn (two or more of α on n): the block and
    each cell's column in it, −1 where absent."""

    block: Block | None
    index: IntArray


def _colocation(
    model: Model, inst: Instance, fam: Families, u: Block, triggers: Triggers
) -> tuple[Colocation, Colocation]:
    """The h and h2 indicators the triggers need, linked to the pieces."""
    n_cfg, n_node = len(inst.configs), len(inst.node_ids)
    node = fam.pair_node[triggers.pair]
    alpha = fam.config[triggers.family]
    other = triggers.beta != alpha
    need = np.zeros((n_cfg, n_node), bool)
    need[triggers.beta[other], node[other]] = True
    need2 = np.zeros((n_cfg, n_node), bool)
    need2[alpha[~other], node[~other]] = True
    return _once(model, inst, fam, u, need), _twice(model, inst, fam, u, need2)


def _cells(
    model: Model, name: str, mask: BoolArray, fam: Families
) -> tuple[Colocation, IntArray, IntArray]:
    """Indicator variables over the true cells of a (configs × nodes) mask, the multi-node
    (family, node) pairs that fall in them, and each such pair's cell."""
    cfg, node = np.nonzero(mask)
    index = np.full(mask.shape, -1, dtype=np.int64)
    index[cfg, node] = np.arange(cfg.size)
    block = model.add_variables(name, cfg.size, upper=1.0, integer=True) if cfg.size else None
    multi = fam.nodes[fam.pair_family] > 1
    sel = np.flatnonzero(multi & mask[fam.config[fam.pair_family], fam.pair_node])
    cell = index[fam.config[fam.pair_family[sel]], fam.pair_node[sel]]
    return Colocation(block, index), sel, cell


def _once(model: Model, inst: Instance, fam: Families, u: Block, mask: BoolArray) -> Colocation:
    """h_βn ≥ u_fn / b_fn for every family f of configuration β."""
    h, sel, cell = _cells(model, "colocated", mask, fam)
    if h.block is not None:
        rows = np.arange(sel.size)
        model.add_constraints(
            "colocated_link",
            {
                h.block: matrix(rows, cell, 1.0, (sel.size, h.block.size)),
                u: matrix(rows, sel, -1.0 / fam.pair_upper[sel], (sel.size, u.size)),
            },
            lower=0.0,
        )
    return h


def _twice(model: Model, inst: Instance, fam: Families, u: Block, mask: BoolArray) -> Colocation:
    """Σ_{f of config α} u_fn − 1 ≤ (pieces of α that fit n − 1) · h2_αn."""
    h2, sel, cell = _cells(model, "colocated_twice", mask, fam)
    if h2.block is not None:
        cfg, node = np.nonzero(mask)
        per_node = np.ones(len(inst.configs), dtype=np.int64)
        per_node[fam.config] = fam.per_node
        cap = np.zeros(cfg.size)
        np.add.at(cap, cell, fam.pair_upper[sel])
        cap = np.minimum(cap, inst.free[node] // per_node[cfg])
        model.add_constraints(
            "colocated_twice_link",
            {
                h2.block: sp.diags(-np.maximum(cap - 1.0, 1.0)),
                u: matrix(cell, sel, 1.0, (cfg.size, u.size)),
            },
            upper=1.0,
        )
    return h2


def _trigger_rows(
    model: Model,
    fam: Families,
    u: Block,
    t: Block,
    trig_t: IntArray,
    triggers: Triggers,
    h: Colocation,
    h2: Colocation,
) -> None:
    """t ≥ u_fn − b_fn (1 − h): the level of CS(α|β) is reached on n once β is there too."""
    node = fam.pair_node[triggers.pair]
    alpha = fam.config[triggers.family]
    b = fam.pair_upper[triggers.pair].astype(float)
    n = triggers.pair.size
    rows = np.arange(n)
    terms = {
        t: matrix(rows, trig_t, 1.0, (n, t.size)),
        u: matrix(rows, triggers.pair, -1.0, (n, u.size)),
    }
    other = triggers.beta != alpha
    for cells, sel, cfg in ((h, other, triggers.beta), (h2, ~other, alpha)):
        if cells.block is not None:
            terms[cells.block] = matrix(
                rows[sel], cells.index[cfg[sel], node[sel]], -b[sel], (n, cells.block.size)
            )
    model.add_constraints("excess_candidate", terms, lower=-b)


def _running_rows(model: Model, inst: Instance, fam: Families, u: Block) -> Counters:
    """z rows: levels of what each running job suffers from candidates next to it."""
    floor = running_floor(inst)
    z_owner: list[int] = []
    z_level: list[float] = []
    multi = np.flatnonzero(fam.nodes[fam.pair_family] > 1)
    on_node = [multi[fam.pair_node[multi] == n] for n in range(len(inst.node_ids))]
    z_delta: list[float] = []
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    chain: list[int] = []
    for r in range(inst.running.size):
        near = np.concatenate([on_node[n] for n in inst.running_nodes[r].tolist()])
        value = inst.cs[inst.running_config[r], fam.config[fam.pair_family[near]]]
        keep = value > floor[r]
        near, value = near[keep], value[keep]
        if not near.size:
            continue
        levels, index = _levels(value)
        start = len(z_delta)
        z_delta.extend(np.diff(levels, prepend=floor[r]).tolist())
        z_owner.extend([r] * levels.size)
        z_level.extend(levels.tolist())
        chain.extend(range(start, start + levels.size - 1))
        rows.append(start + index)
        cols.append(near)
    if not z_delta:
        return Counters(None, np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    n_z, n_pair = len(z_delta), fam.pair_family.size
    z = model.add_variables("running_excess", n_z, upper=1.0, integer=True)
    row, col = np.concatenate(rows), np.concatenate(cols)
    model.add_constraints(
        "running_excess_piece",
        {
            z: matrix(np.arange(row.size), row, 1.0, (row.size, n_z)),
            u: matrix(np.arange(row.size), col, -1.0 / fam.pair_upper[col], (row.size, n_pair)),
        },
        lower=0.0,
    )
    _chain_rows(model, "running_excess_chain", z, chain)
    return Counters(z, np.array(z_owner), np.array(z_level), np.array(z_delta))


def decode(inst: Instance, pooled: Pooled, x: FloatArray) -> Started:
    """Started candidates (job index → option, nodes) from a solution: each family's pieces are
    grouped into jobs in order of what they suffer on their node, worst first, so the worst
    pieces share jobs; the group's members take the jobs in order."""
    fam = pooled.families
    s = np.rint(x[pooled.s.span]).astype(np.int64)
    u = np.rint(x[pooled.u.span]).astype(np.int64)
    worst = _piece_worst(inst, fam, u)
    idle = {int(g): iter(inst.candidates[inst.group == g].tolist()) for g in np.unique(fam.group)}
    started: Started = {}
    for f in np.flatnonzero(s > 0).tolist():
        pairs = np.flatnonzero((fam.pair_family == f) & (u > 0))
        jobs = _group_pieces(
            fam.pair_node[pairs], u[pairs], worst[pairs], int(s[f]), int(fam.nodes[f])
        )
        for nodes in jobs:
            j = next(idle[int(fam.group[f])])
            started[j] = (_option_of(inst, j, int(fam.option[f])), nodes)
    return started


def _piece_worst(inst: Instance, fam: Families, u: IntArray) -> FloatArray:
    """E per (family, node) pair: the worst CS a piece there meets, running jobs and the
    multi-node candidate pieces the solution puts on the node included."""
    multi = fam.nodes[fam.pair_family] > 1
    count = np.zeros((len(inst.configs), len(inst.node_ids)))
    np.add.at(count, (fam.config[fam.pair_family], fam.pair_node), np.where(multi, u, 0))
    alpha, node = fam.config[fam.pair_family], fam.pair_node
    others = count[:, node].T  # pairs × configs
    others[np.arange(alpha.size), alpha] -= 1.0  # the piece itself
    met = np.where(others > 0, inst.cs[alpha], 1.0).max(axis=1, initial=1.0)
    return np.where(multi, np.maximum(running_worst(inst)[alpha, node], met), 1.0)


def _group_pieces(
    nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> list[list[int]]:
    """`jobs` sets of k distinct nodes (node i used count_i times) minimizing Σ_jobs max worst:
    in order, worst first, when that keeps every job's nodes distinct; else a small assignment
    MILP (a node can serve every job: count_i ≤ jobs)."""
    order = np.argsort(-worst, kind="stable")
    pieces = np.repeat(nodes[order], count[order])
    consecutive = pieces.reshape(jobs, k)
    if all(np.unique(row).size == k for row in consecutive):
        return [row.tolist() for row in consecutive]
    # The MILP may stop at its time limit with a worse grouping than the greedy one.
    value = dict(zip(nodes.tolist(), worst.tolist(), strict=True))
    options = [_forced_first(nodes, count, worst, jobs, k), _assign(nodes, count, worst, jobs, k)]
    return min(options, key=lambda grouping: sum(max(value[n] for n in job) for job in grouping))


def _forced_first(
    nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> list[list[int]]:
    """Jobs one at a time, each with the worst pieces left, except that a node with a piece for
    every job still to fill must join this one (else it would need one job twice). What is left
    after each job can always be grouped: every count stays within the jobs remaining."""
    left = dict(zip(nodes.tolist(), count.tolist(), strict=True))
    rank = {n: i for i, n in enumerate(nodes[np.argsort(-worst, kind="stable")].tolist())}
    out: list[list[int]] = []
    for remaining in range(jobs, 0, -1):
        forced = [n for n, c in left.items() if c == remaining]
        free = sorted((n for n, c in left.items() if 0 < c < remaining), key=rank.__getitem__)
        job = forced + free[: k - len(forced)]
        for n in job:
            left[n] -= 1
        out.append(job)
    return out


def _assign(
    nodes: IntArray, count: IntArray, worst: FloatArray, jobs: int, k: int
) -> list[list[int]]:
    """a_ij ∈ {0,1} (node i in job j), m_j ≥ worst_i a_ij; minimize Σ m_j
    s.t. Σ_j a_ij = count_i, Σ_i a_ij = k, m_j ≥ m_j+1 (jobs are interchangeable)."""
    n = nodes.size
    na = n * jobs
    a = np.arange(na).reshape(n, jobs)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def row(c: list[int], v: list[float], lower: float, upper: float) -> None:
        r = len(lo)
        rows.extend([r] * len(c))
        cols.extend(c)
        vals.extend(v)
        lo.append(lower)
        hi.append(upper)

    for i in range(n):
        row(a[i].tolist(), [1.0] * jobs, count[i], count[i])
        for j in range(jobs):
            row([na + j, int(a[i, j])], [1.0, -float(worst[i])], 0.0, np.inf)
    for j in range(jobs):
        row(a[:, j].tolist(), [1.0] * n, k, k)
        if j + 1 < jobs:
            row([na + j, na + j + 1], [1.0, -1.0], 0.0, np.inf)
    matrix_ = sp.csr_matrix((vals, (rows, cols)), shape=(len(lo), na + jobs))
    cost = np.concatenate([np.zeros(na), np.ones(jobs)])
    integrality = np.concatenate([np.ones(na), np.zeros(jobs)])
    res = milp(
        cost,
        constraints=LinearConstraint(matrix_, lo, hi),
        integrality=integrality,
        bounds=Bounds(0, np.concatenate([np.ones(na), np.full(jobs, np.inf)])),
        options={"time_limit": GROUPING_SECONDS},
    )
    if res.x is None:  # no grouping within the time: deal round-robin (always valid)
        pieces = np.repeat(nodes, count)
        return [pieces[j::jobs].tolist() for j in range(jobs)]
    take = np.rint(res.x[:na]).reshape(n, jobs) > 0
    return [nodes[take[:, j]].tolist() for j in range(jobs)]


def _option_of(inst: Instance, job: int, representative: int) -> int:
    """The row job `job` starts with in the representative's shape: its own (multi-node) row, or
    the group's pooled single-node row."""
    opts = inst.options
    if opts.pooled[representative]:
        return representative
    position = int(np.searchsorted(inst.candidates, job))
    same = (
        (opts.candidate == position)
        & ~opts.pooled
        & (opts.nodes == opts.nodes[representative])
        & (opts.per_node == opts.per_node[representative])
        & (opts.gpu_type == opts.gpu_type[representative])
    )
    return int(np.flatnonzero(same)[0])


def encode(inst: Instance, pooled: Pooled, started: Started) -> tuple[IntArray, FloatArray]:
    """A placement as a complete MILP start: pieces, counters and indicators at the values the
    placement gives them (counters from the placement's true CS, which meets every row), so
    the solver starts from an incumbent without a search to complete it."""
    fam = pooled.families
    opts = inst.options
    key = {
        (int(g), int(k), int(p), int(t)): f
        for f, (g, k, p, t) in enumerate(
            zip(fam.group, fam.nodes, fam.per_node, opts.gpu_type[fam.option], strict=True)
        )
    }
    pair_of = {
        (int(f), int(n)): q
        for q, (f, n) in enumerate(zip(fam.pair_family, fam.pair_node, strict=True))
    }
    s = np.zeros(fam.count)
    u = np.zeros(fam.pair_family.size)
    family_of: dict[int, int] = {}
    for j, (o, nodes) in started.items():
        g = int(inst.group[np.searchsorted(inst.candidates, j)])
        f = key[(g, int(opts.nodes[o]), int(opts.per_node[o]), int(opts.gpu_type[o]))]
        family_of[j] = f
        s[f] += 1
        for n in nodes:
            u[pair_of[(f, n)]] += 1
    cs = evaluate(inst, started, 0.5, "worst").cs
    columns = [pooled.s, pooled.u]
    values: list[NDArray[np.generic]] = [s, u]
    own = pooled.own
    if own.block is not None:
        jobs_cs = np.array([cs[j] for j in family_of])
        jobs_family = np.array(list(family_of.values()), dtype=np.int64)
        reach = jobs_cs[None, :] >= own.level[:, None] - 1e-9
        values.append((reach & (jobs_family[None, :] == own.owner[:, None])).sum(axis=1))
        columns.append(own.block)
    running = pooled.running
    if running.block is not None:
        values.append(cs[inst.running[running.owner]] >= running.level - 1e-9)
        columns.append(running.block)
    multi = np.where(fam.nodes[fam.pair_family] > 1, u, 0.0)
    count = np.zeros((len(inst.configs), len(inst.node_ids)))
    np.add.at(count, (fam.config[fam.pair_family], fam.pair_node), multi)
    for cells, least in ((own.h, 1), (own.h2, 2)):
        if cells is not None and cells.block is not None:
            cfg, node = np.nonzero(cells.index >= 0)
            value = np.zeros(cells.block.size)
            value[cells.index[cfg, node]] = count[cfg, node] >= least
            values.append(value)
            columns.append(cells.block)
    if own.met is not None:
        # w at its lower bound: the pair's pieces when a candidate lifts them to the cell's value
        worst = _piece_worst(inst, fam, u.astype(np.int64))
        lifted = worst[own.met.pair] >= own.met.value - 1e-12
        values.append(np.where(lifted, u[own.met.pair], 0.0))
        columns.append(own.met.block)
    index = np.concatenate([np.arange(b.start, b.start + b.size) for b in columns])
    return index.astype(np.int64), np.concatenate([np.asarray(v, float) for v in values])
