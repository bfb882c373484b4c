"""The placement core shared by both contention penalties: which candidate starts, in which
shape, on which nodes (FORMULATIONS §7).

For option o = (candidate a, shape k_o nodes × p_o GPUs, GPU type), eligible nodes n (right type,
at least p_o free GPUs):
    v_o ∈ {0,1}          candidate a starts with option o
    w_on ∈ {0,1}         ... and uses node n
    Σ_{o∈a} v_o ≤ 1                       (start at most once)
    Σ_n w_on = k_o v_o                    (exactly k_o nodes: the shape, never another split)
    Σ_o p_o w_on ≤ F_n                    (free GPUs of node n; running jobs never move)
    Σ_{o: p_o ≥ t} w_on ≤ ⌊F_n / t⌋       (piece counts, where t does not divide F_n)
A pooled row (single-node shape of a group of m interchangeable candidates, see
`instance`) has integer v_o ≤ m and w_on ≤ min(m, ⌊F_n/p_o⌋), and the group's starts
are capped by m instead.
Symmetry: interchangeable candidates start in order and, when both start, in order of a position
key; interchangeable empty nodes are loaded in order. `canonical` maps any placement to the
equivalent one these rows keep, so a starting incumbent is never cut off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.reference import MeanLoss
from apportion.solver.arraytypes import IntArray
from apportion.solver.model import Block, Model, Take


def matrix(
    rows: IntArray, cols: IntArray, vals: ArrayLike, shape: tuple[int, int]
) -> sp.csr_matrix:
    """A sparse (rows × cols) block from coordinates; duplicates add up."""
    data = np.broadcast_to(np.asarray(vals, dtype=float), rows.shape)
    return sp.csr_matrix((data, (rows, cols)), shape=shape)


@dataclass
class Placement:
    """The placement variables and the index arrays that explain them."""

    v: Block  # per option
    w: Block  # per eligible (option, node) pair
    pair_option: IntArray
    pair_node: IntArray
    eligible: NDArray[np.bool_]  # options × nodes
    loss: MeanLoss | None = None  # the reference objective's rows, when the model has them

    @property
    def num_pairs(self) -> int:
        return int(self.pair_option.size)


def add_placement(model: Model, inst: Instance) -> Placement:
    opts = inst.options
    eligible = (inst.node_type[None, :] == opts.gpu_type[:, None]) & (
        inst.free[None, :] >= opts.per_node[:, None]
    )
    pair_option, pair_node = np.nonzero(eligible)
    job_label = [inst.job_ids[j] for j in inst.candidates]
    shape_label = [
        f"{k}x{p}" for k, p in zip(opts.nodes.tolist(), opts.per_node.tolist(), strict=True)
    ]
    v = model.add_variables(
        "start",
        opts.size,
        upper=opts.limit.astype(float),
        integer=True,
        coords=(("job", Take(job_label, opts.candidate)), ("shape", shape_label)),
    )
    # A pooled single-node row counts jobs per node: up to its limit, or what fits the node.
    fits = inst.free[pair_node] // opts.per_node[pair_option]
    w_upper = np.where(opts.pooled[pair_option], np.minimum(opts.limit[pair_option], fits), 1)
    w = model.add_variables(
        "use",
        pair_option.size,
        upper=w_upper.astype(float),
        integer=True,
        coords=(
            ("job", Take(job_label, opts.candidate[pair_option])),
            ("shape", Take(shape_label, pair_option)),
            ("node", Take(inst.node_ids, pair_node)),
        ),
    )
    placement = Placement(v, w, pair_option, pair_node, eligible)
    _add_core_rows(model, inst, placement, job_label)
    _add_cardinality_rows(model, inst, placement)
    _add_symmetry_rows(model, inst, placement)
    return placement


def _add_core_rows(model: Model, inst: Instance, pl: Placement, job_label: list[str]) -> None:
    opts, n_opt, n_pair = inst.options, inst.options.size, pl.num_pairs
    own = np.flatnonzero(~opts.pooled)
    cand = np.unique(opts.candidate[own])
    model.add_constraints(
        "start_once",
        {pl.v: matrix(np.searchsorted(cand, opts.candidate[own]), own, 1.0, (cand.size, n_opt))},
        upper=1.0,
        coords=(("job", Take(job_label, cand)),),
    )
    if opts.pooled.any():
        # A group starts at most its size: pooled single-node starts plus its members' own.
        group_of_option = inst.group[opts.candidate]
        groups = np.unique(group_of_option[opts.pooled])
        sel = np.flatnonzero(np.isin(group_of_option, groups))
        model.add_constraints(
            "start_group",
            {
                pl.v: matrix(
                    np.searchsorted(groups, group_of_option[sel]), sel, 1.0, (groups.size, n_opt)
                )
            },
            upper=np.bincount(inst.group)[groups].astype(float),
        )
    model.add_constraints(
        "shape",
        {
            pl.w: matrix(pl.pair_option, np.arange(n_pair), 1.0, (n_opt, n_pair)),
            pl.v: sp.diags(-opts.nodes.astype(float)),
        },
        lower=0.0,
        upper=0.0,
        coords=(("job", Take(job_label, opts.candidate)),),
    )
    n_nodes = len(inst.node_ids)
    model.add_constraints(
        "capacity",
        {
            pl.w: matrix(
                pl.pair_node, np.arange(n_pair), opts.per_node[pl.pair_option], (n_nodes, n_pair)
            )
        },
        upper=inst.free.astype(float),
        coords=(("node", inst.node_ids),),
    )


def _add_cardinality_rows(model: Model, inst: Instance, pl: Placement) -> None:
    """Σ_{o: p_o ≥ t} w_on ≤ ⌊F_n / t⌋ for each piece size t that does not divide F_n.

    Implied for integers (each such piece takes t GPUs or more) and by the capacity row when t
    divides F_n; otherwise it cuts fractional packings, e.g. two pieces of 2 GPUs at 3/4 each on
    a node with 3 free GPUs.
    """
    per_node = inst.options.per_node[pl.pair_option]
    free = inst.free[pl.pair_node]
    rows: list[IntArray] = []
    cols: list[IntArray] = []
    upper: list[int] = []
    labels: list[str] = []
    for t in np.unique(per_node).tolist():
        sel = np.flatnonzero((per_node >= t) & (free % t != 0))
        nodes = np.unique(pl.pair_node[sel])
        rows.append(len(upper) + np.searchsorted(nodes, pl.pair_node[sel]))
        cols.append(sel)
        upper.extend((inst.free[nodes] // t).tolist())
        labels.extend(f"{inst.node_ids[n]}/{t}" for n in nodes.tolist())
    if not upper:
        return
    model.add_constraints(
        "pieces",
        {pl.w: matrix(np.concatenate(rows), np.concatenate(cols), 1.0, (len(upper), pl.num_pairs))},
        upper=np.array(upper, dtype=float),
        coords=(("node_size", labels),),
    )


def interchangeable_runs(keys: list[tuple[object, ...]]) -> tuple[IntArray, IntArray]:
    """Consecutive pairs (first, second) of items with equal keys, each key's items in order."""
    groups: dict[tuple[object, ...], list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    firsts, seconds = [], []
    for members in groups.values():
        firsts.extend(members[:-1])
        seconds.extend(members[1:])
    return np.array(firsts, dtype=np.int64), np.array(seconds, dtype=np.int64)


def own_rank(inst: Instance) -> IntArray:
    """Rank of each own (not pooled) row within its candidate: equal across identical members."""
    opts = inst.options
    own_rows = (~opts.pooled).astype(np.int64)
    before = np.cumsum(own_rows) - own_rows
    return before - before[np.searchsorted(opts.candidate, opts.candidate)]


def node_classes(inst: Instance) -> list[tuple[object, ...]]:
    """Equal keys = interchangeable nodes: same type and size, no running job."""
    occupied = np.zeros(len(inst.node_ids), bool)
    for nodes in inst.running_nodes:
        occupied[nodes] = True
    return [
        (int(t), int(g)) if not busy else ("busy", n)
        for n, (t, g, busy) in enumerate(zip(inst.node_type, inst.node_gpus, occupied, strict=True))
    ]


def canonical(inst: Instance, started: Started) -> Started:
    """The equivalent placement the symmetry rows keep: interchangeable nodes loaded in
    non-increasing order, interchangeable candidates' own starts first and by position key."""
    opts, n_nodes = inst.options, len(inst.node_ids)
    load = np.zeros(n_nodes, dtype=np.int64)
    for o, nodes in started.values():
        load[nodes] += opts.per_node[o]
    relabel = np.arange(n_nodes)
    first, second = interchangeable_runs(node_classes(inst))
    for members in _runs(first, second):
        ordered = members[np.argsort(-load[members], kind="stable")]
        relabel[ordered] = members
    moved = {j: (o, relabel[nodes].tolist()) for j, (o, nodes) in started.items()}
    rank = own_rank(inst)
    out: Started = {}
    for g in np.unique(inst.group).tolist():
        members = inst.candidates[inst.group == g].tolist()
        mine = [moved[j] for j in members if j in moved]
        own = sorted(
            (p for p in mine if not opts.pooled[p[0]]),
            key=lambda p: sum((rank[p[0]] * n_nodes + n) / opts.nodes[p[0]] for n in p[1]),
        )
        pooled = [p for p in mine if opts.pooled[p[0]]]
        for j, (o, nodes) in zip(members, own + pooled, strict=False):
            if not opts.pooled[o]:
                position = int(np.searchsorted(inst.candidates, j))
                rows = np.flatnonzero((opts.candidate == position) & ~opts.pooled)
                o = int(rows[rank[o]])
            out[j] = (o, nodes)
    return out


def _runs(first: IntArray, second: IntArray) -> list[IntArray]:
    """The chains first→second of `interchangeable_runs` as member arrays."""
    chains: list[list[int]] = []
    for a, b in zip(first.tolist(), second.tolist(), strict=True):
        if chains and chains[-1][-1] == a:
            chains[-1].append(b)
        else:
            chains.append([a, b])
    return [np.array(c, dtype=np.int64) for c in chains]


def _add_order_rows(
    model: Model,
    inst: Instance,
    pl: Placement,
    incidence: sp.csr_matrix,
    first: IntArray,
    second: IntArray,
) -> None:
    """Interchangeable candidates that both start are placed in order of a position key
    pos = Σ (option rank · N + node) · w / k (its mean node, options apart):
        pos_b − pos_a + M (start_a − start_b) ≥ 0
    Permuting identical jobs never changes the objective, so sorting them by pos loses nothing;
    it removes the many equal placements the search would otherwise revisit."""
    opts, n_nodes = inst.options, len(inst.node_ids)
    rank = own_rank(inst)
    key = (rank[pl.pair_option] * n_nodes + pl.pair_node) / opts.nodes[pl.pair_option]
    own = np.flatnonzero(~opts.pooled[pl.pair_option])
    pair_of = matrix(
        opts.candidate[pl.pair_option[own]], own, key[own], (incidence.shape[0], pl.num_pairs)
    )
    big = float((rank.max(initial=0) + 1) * n_nodes)
    model.add_constraints(
        "symmetry_order",
        {
            pl.w: pair_of[second] - pair_of[first],
            pl.v: big * (incidence[first] - incidence[second]),
        },
        lower=0.0,
    )


def _add_symmetry_rows(model: Model, inst: Instance, pl: Placement) -> None:
    opts, n_opt, n_pair = inst.options, inst.options.size, pl.num_pairs
    has_options = np.zeros(len(inst.identity), bool)
    has_options[opts.candidate] = True
    keys = [(*key, i) if not has_options[i] else key for i, key in enumerate(inst.identity)]
    first, second = interchangeable_runs(keys)
    if first.size:
        # Row i: Σ v(second_i) − Σ v(first_i) ≤ 0, assembled from option → candidate incidence.
        own = np.flatnonzero(~opts.pooled)
        incidence = matrix(opts.candidate[own], own, 1.0, (len(keys), n_opt))
        model.add_constraints(
            "symmetry_jobs", {pl.v: incidence[second] - incidence[first]}, upper=0.0
        )
        _add_order_rows(model, inst, pl, incidence, first, second)
    node_keys = node_classes(inst)
    first, second = interchangeable_runs(node_keys)
    if first.size:
        load = matrix(
            pl.pair_node,
            np.arange(n_pair),
            opts.per_node[pl.pair_option],
            (len(node_keys), n_pair),
        )
        model.add_constraints("symmetry_nodes", {pl.w: load[second] - load[first]}, upper=0.0)
