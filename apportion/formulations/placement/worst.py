"""Worst-co-runner contention rows (the default penalty): c_j = max(1, max_b CS(α_j | α_b)).

Co-location is aggregated by configuration per node instead of per job pair, which keeps the
model linear in (configurations × nodes) rather than quadratic in jobs. With α_o the
configuration (class, demand, k_o) of option o, w_on and v_o from `model`, and the
constants R_αn = max(1, max_{r on n} CS(α | α_r)) (running jobs on n) and K_r = max(1, CS of
running job r from its running co-runners):

Candidates next to candidates (pairs (α, β) with both pieces fitting node n together):
    h_βn ≥ w_on                        ∀ o with α_o = β      (a candidate of config β is on n)
    Σ_{o: α_o=α} w_on − 1 ≤ (m_αn − 1) h2_αn                 (two or more of config α on n)
    P_αn ≥ R_αn + (CS(α|β) − R_αn) h_βn  ∀ β ≠ α              (what config α suffers on n)
    P_αn ≥ R_αn + (CS(α|α) − R_αn) h2_αn
    c_a ≥ P_{α_o n} − (P̄_αn − 1)(1 − w_on)                      (candidate a, if it is on n)
Candidates next to running jobs:
    c_a ≥ 1 + Σ_{o∈a} (R_{α_o n} − 1) w_on           ∀ n       (exact, per node)
    c_a ≥ 1 + Σ_{o∈a} Σ_n (R_{α_o n} − 1) w_on / k_o            (mean ≤ max)
    c_a ≥ 1 + Σ_{o∈a} [(R°_k − 1) v_o + Σ_n (R_{α_o n} − R°_k)⁺ w_on / k_o]
                                          (R°_k: k_o-th smallest R over o's nodes; see _kth_rows)
Running jobs next to candidates: `running`.

The mean and k-th rows are implied for integer points; they stop the relaxation from spreading a
job thinly over cheap nodes. Rows are only written where they can bind (a CS above R_αn, resp.
K_r); jobs without any keep a constant CS. Minimizing Σ c makes every c equal to its definition
at an optimum. m_αn bounds the pieces of config α that fit node n together, P̄_αn the largest
value P_αn can take. The candidate-pair rows can be restricted to a set of (α, β) pairs, which
`search` grows lazily.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.indexed import Indexed, indexed
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.model import Placement, matrix
from apportion.formulations.placement.running import (
    running_floor,
    running_pieces,
    running_rows,
    running_worst,
)
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import Block, Model, Take


@dataclass
class Penalty:
    """Σ_j CS_j = Σ_b terms[b] · b + constant (over every job of the snapshot)."""

    terms: dict[Block, FloatArray]
    constant: float


def add_worst(
    model: Model, inst: Instance, pl: Placement, modeled: BoolArray | None = None
) -> Penalty:
    """The rows of the module docstring; candidate-candidate rows only for the (α, β) pairs in
    `modeled` (all when None), so a caller can add them lazily."""
    opts = inst.options
    cfg, node = opts.config[pl.pair_option], pl.pair_node  # per (option, node) pair
    base = running_worst(inst)  # R_αn
    cells = _candidate_cells(inst, pl, base, modeled)
    near = _running_cells(inst, pl, cells.present)
    need_h: BoolArray = np.asarray(cells.hurt.any(axis=0))
    need_h[near.beta, near.pieces[1][near.piece]] = True
    h = indexed(model, "colocated", need_h, inst, integer=True, lower=0.0)
    h2 = indexed(model, "colocated_twice", cells.twice, inst, integer=True, lower=0.0)
    need_p = cells.hurt.any(axis=1) | cells.twice
    p = indexed(model, "suffers", need_p, inst, integer=False, lower=base[need_p])
    _once_rows(model, h, cfg, node, pl)
    _twice_rows(model, h2, cells.pieces, cfg, node, pl)
    bound = _suffer_rows(model, inst, p, h, h2, cells.hurt, base)
    c_cand = _candidate_rows(model, inst, pl, p, bound, base, cfg, node)
    spread = np.where(near.single[node], 1.0, opts.per_node[pl.pair_option] / inst.free[node])
    hurt = (near.piece, near.beta)
    c_run, run_has = running_rows(model, inst, pl, h, hurt, near.pieces, near.floor, spread)
    constant = float(near.floor[~run_has].sum()) + float(inst.candidates.size - c_cand.size)
    return Penalty(
        {c_cand: np.ones(c_cand.size), c_run: np.ones(c_run.size)},
        constant,
    )


@dataclass
class _CandidateCells:
    """Where candidates next to candidates need rows."""

    present: BoolArray  # (α, n): a candidate piece of configuration α can be on n
    hurt: BoolArray  # (α, β, n): β on n raises what α suffers there, both fitting together
    twice: BoolArray  # (α, n): two pieces of α on n raise what α suffers there (h2 cells)
    pieces: FloatArray  # m_αn


def _candidate_cells(
    inst: Instance, pl: Placement, base: FloatArray, modeled: BoolArray | None
) -> _CandidateCells:
    opts = inst.options
    n_cfg, n_node = len(inst.configs), len(inst.node_ids)
    cfg, node = opts.config[pl.pair_option], pl.pair_node
    present = np.zeros((n_cfg, n_node), bool)
    present[cfg, node] = True
    size = np.ones(n_cfg, dtype=np.int64)
    size[opts.config] = opts.per_node
    # CS(α|β) > R_αn: a candidate of config β on n makes config α suffer more than it already
    # does; and both pieces must fit on n together.
    above = (inst.cs[:, :, None] > base[:, None, :]) & ~np.eye(n_cfg, dtype=bool)[:, :, None]
    if modeled is not None:
        above &= modeled[:, :, None]
    together = (size[:, None, None] + size[None, :, None]) <= inst.free[None, None, :]
    hurt = above & together & present[:, None, :] & present[None, :, :]  # α, β, n
    pieces = _pieces(inst, pl, cfg, node)
    twice = present & (np.diag(inst.cs)[:, None] > base) & (pieces >= 2)
    if modeled is not None:
        twice &= np.diag(modeled)[:, None]
    return _CandidateCells(present, hurt, twice, pieces)


@dataclass
class _RunningCells:
    """Where candidates next to running jobs need the exact (h) rows."""

    single: BoolArray  # per node: it holds at most one candidate piece
    pieces: tuple[IntArray, IntArray]  # (running job, node) per running piece
    floor: FloatArray  # K_r
    piece: IntArray  # (running piece, β) with β raising what the piece's job suffers
    beta: IntArray


def _running_cells(inst: Instance, pl: Placement, present: BoolArray) -> _RunningCells:
    opts = inst.options
    node = pl.pair_node
    # Nodes that hold at most one candidate piece: there the sum over pieces is the max.
    smallest = np.full(len(inst.node_ids), np.iinfo(np.int64).max)
    np.minimum.at(smallest, node, opts.per_node[pl.pair_option])
    single = inst.free < 2 * smallest
    r_job, r_node = running_pieces(inst)
    r_cfg = inst.running_config[r_job]
    floor = running_floor(inst)
    run_hurt = (inst.cs[r_cfg] > floor[r_job][:, None]) & present[:, r_node].T  # piece × β
    run_hurt &= ~single[r_node][:, None]
    piece, beta = np.nonzero(run_hurt)
    return _RunningCells(single, (r_job, r_node), floor, piece, beta)


def _once_rows(model: Model, h: Indexed, cfg: IntArray, node: IntArray, pl: Placement) -> None:
    """h_βn ≥ w_on for every option o of configuration β."""
    sel = np.flatnonzero(h.index[cfg, node] >= 0)
    if not sel.size:
        return
    model.add_constraints(
        "colocated_link",
        {
            h.block: matrix(
                np.arange(sel.size), h.index[cfg[sel], node[sel]], 1.0, (sel.size, h.block.size)
            ),
            pl.w: matrix(np.arange(sel.size), sel, -1.0, (sel.size, pl.num_pairs)),
        },
        lower=0.0,
    )


def _pieces(inst: Instance, pl: Placement, cfg: IntArray, node: IntArray) -> FloatArray:
    """m_αn: candidates of config α that could all sit on node n at once."""
    n_cfg, n_node = len(inst.configs), len(inst.node_ids)
    cand = inst.options.candidate[pl.pair_option]
    distinct = np.unique(np.stack([cand, cfg, node]), axis=1)
    count = np.zeros((n_cfg, n_node))
    np.add.at(count, (distinct[1], distinct[2]), 1.0)
    per_node = np.ones(n_cfg)
    per_node[inst.options.config] = inst.options.per_node
    return np.minimum(count, np.floor(inst.free[None, :] / per_node[:, None]))


def _twice_rows(
    model: Model, h2: Indexed, pieces: FloatArray, cfg: IntArray, node: IntArray, pl: Placement
) -> None:
    sel = np.flatnonzero(h2.index[cfg, node] >= 0)
    if not sel.size:
        return
    row = h2.index[cfg[sel], node[sel]]
    a, n = np.nonzero(h2.index >= 0)
    model.add_constraints(
        "colocated_twice_link",
        {
            pl.w: matrix(row, sel, 1.0, (h2.block.size, pl.num_pairs)),
            h2.block: matrix(
                np.arange(a.size), np.arange(a.size), -(pieces[a, n] - 1.0), (a.size, a.size)
            ),
        },
        upper=1.0,
    )


def _suffer_rows(
    model: Model,
    inst: Instance,
    p: Indexed,
    h: Indexed,
    h2: Indexed,
    cand_hurt: BoolArray,
    base: FloatArray,
) -> FloatArray:
    """P_αn ≥ R_αn + (CS − R_αn)·h; returns P̄ (configs × nodes), the largest P can be."""
    alpha, beta, n = np.nonzero(cand_hurt)
    gain = inst.cs[alpha, beta] - base[alpha, n]
    a2, n2 = np.nonzero(h2.index >= 0)
    gain2 = inst.cs[a2, a2] - base[a2, n2]
    rows = np.arange(alpha.size + a2.size)
    bound = base.copy()
    if not rows.size:
        return bound
    target = np.concatenate([alpha, a2]), np.concatenate([n, n2])
    model.add_constraints(
        "suffers_bound",
        {
            p.block: matrix(rows, p.index[target], 1.0, (rows.size, p.block.size)),
            h.block: matrix(rows[: alpha.size], h.index[beta, n], -gain, (rows.size, h.block.size)),
            h2.block: matrix(
                rows[alpha.size :], h2.index[a2, n2], -gain2, (rows.size, h2.block.size)
            ),
        },
        lower=base[target],
    )
    np.maximum.at(bound, (alpha, n), inst.cs[alpha, beta])
    np.maximum.at(bound, (a2, n2), inst.cs[a2, a2])
    return bound


def unmodeled_pairs(inst: Instance, started: Started, modeled: BoolArray) -> BoolArray:
    """(α, β) of co-located started candidates where CS(α|β) exceeds what the running jobs on
    the shared node impose and the pair is not modeled yet: the rows a lazy solve must add."""
    base = running_worst(inst)
    missing = np.zeros_like(modeled)
    on_node: dict[int, list[int]] = {}
    for o, nodes in started.values():
        for n in nodes:
            on_node.setdefault(n, []).append(int(inst.options.config[o]))
    for n, configs in on_node.items():
        for i, alpha in enumerate(configs):
            for j, beta in enumerate(configs):
                if i != j and inst.cs[alpha, beta] > base[alpha, n] and not modeled[alpha, beta]:
                    missing[alpha, beta] = True
    return missing


def _candidate_rows(
    model: Model,
    inst: Instance,
    pl: Placement,
    p: Indexed,
    bound: FloatArray,
    base: FloatArray,
    cfg: IntArray,
    node: IntArray,
) -> Block:
    """c_a ≥ P − (P̄ − 1)(1 − w) per pair; c_a ≥ 1 + Σ (R − 1) w per node and on average."""
    cand = inst.options.candidate[pl.pair_option]
    via_p = np.flatnonzero(p.index[cfg, node] >= 0)
    excess = base[cfg, node] - 1.0
    via_r = np.flatnonzero(excess > 0)
    used = np.unique(np.concatenate([cand[via_p], cand[via_r]]))
    labels = [inst.job_ids[j] for j in inst.candidates]
    c = model.add_variables("cs", used.size, lower=1.0, coords=(("job", Take(labels, used)),))
    col = np.searchsorted(used, cand)
    if via_p.size:
        slack = bound[cfg[via_p], node[via_p]] - 1.0
        rows = np.arange(via_p.size)
        model.add_constraints(
            "cs_candidates",
            {
                c: matrix(rows, col[via_p], 1.0, (rows.size, c.size)),
                p.block: matrix(
                    rows, p.index[cfg[via_p], node[via_p]], -1.0, (rows.size, p.block.size)
                ),
                pl.w: matrix(rows, via_p, -slack, (rows.size, pl.num_pairs)),
            },
            lower=-slack,
        )
    if via_r.size:
        _neighbour_rows(model, inst, pl, c, used, via_r, excess)
        _kth_rows(model, inst, pl, c, used, base[cfg, node])
    return c


def _neighbour_rows(
    model: Model,
    inst: Instance,
    pl: Placement,
    c: Block,
    used: IntArray,
    via_r: IntArray,
    excess: FloatArray,
) -> None:
    """c_a ≥ 1 + Σ_{o∈a} (R_{α_o n} − 1) w_on per node n, and the same summed over n / k_o."""
    cand = inst.options.candidate[pl.pair_option]
    keys, row = np.unique(np.stack([cand[via_r], pl.pair_node[via_r]]), axis=1, return_inverse=True)
    row = row.reshape(-1)
    count = keys.shape[1]
    model.add_constraints(
        "cs_running_neighbours",
        {
            c: matrix(np.arange(count), np.searchsorted(used, keys[0]), 1.0, (count, c.size)),
            pl.w: matrix(row, via_r, -excess[via_r], (count, pl.num_pairs)),
        },
        lower=1.0,
    )
    mean_of = np.unique(cand[via_r])
    k = inst.options.nodes[pl.pair_option[via_r]]
    model.add_constraints(
        "cs_running_mean",
        {
            c: matrix(
                np.arange(mean_of.size),
                np.searchsorted(used, mean_of),
                1.0,
                (mean_of.size, c.size),
            ),
            pl.w: matrix(
                np.searchsorted(mean_of, cand[via_r]),
                via_r,
                -excess[via_r] / k,
                (mean_of.size, pl.num_pairs),
            ),
        },
        lower=1.0,
    )


def _kth_rows(
    model: Model, inst: Instance, pl: Placement, c: Block, used: IntArray, r_pair: FloatArray
) -> None:
    """c_a ≥ 1 + Σ_o [(R°_k − 1) v_o + Σ_n (R_on − R°_k)⁺ w_on / k_o], R°_k the k-th smallest R
    over option o's nodes: any k of them include one at least that bad, and each node above it
    raises the max by at least its excess over k. Exact at the cheapest placement, unlike the
    mean, and it prices starting at all (the v term)."""
    opts = inst.options
    order = np.lexsort((r_pair, pl.pair_option))
    first = np.searchsorted(pl.pair_option[order], np.arange(opts.size))
    kth = np.ones(opts.size)
    has = np.bincount(pl.pair_option, minlength=opts.size) >= opts.nodes
    kth[has] = r_pair[order[first[has] + opts.nodes[has] - 1]]
    above = np.maximum(r_pair - kth[pl.pair_option], 0.0) / opts.nodes[pl.pair_option]
    rows_of = np.searchsorted(used, opts.candidate)
    mine = np.isin(opts.candidate, used)
    pair_mine = mine[pl.pair_option] & (above > 0)
    if not (mine & (kth > 1)).any() and not pair_mine.any():
        return
    model.add_constraints(
        "cs_running_kth",
        {
            c: sp.identity(used.size, format="csr"),
            pl.v: matrix(
                rows_of[mine], np.flatnonzero(mine), -(kth[mine] - 1.0), (used.size, opts.size)
            ),
            pl.w: matrix(
                rows_of[pl.pair_option[pair_mine]],
                np.flatnonzero(pair_mine),
                -above[pair_mine],
                (used.size, pl.num_pairs),
            ),
        },
        lower=1.0,
    )
