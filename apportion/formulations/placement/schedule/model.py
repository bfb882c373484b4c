"""The schedule MILP (FORMULATIONS §7, "schedule"): who runs after this decision, where, and
whether a running job stays, moves or stops.

Choices o of job j (`instance.Choices`): shape k_o × p_o on nodes of one type, configuration
α_o, speed σ_o; a running job's `stay` choice is its current placement (GPUs g_jn on its nodes).
Λ(α|β) = 1 − 1/CS(α|β) is the throughput configuration α loses next to β; C the cluster's GPUs.

    v_o ∈ {0,1}   job j runs with choice o          w_on ∈ {0,1}  ... and uses node n
    h_βn ∈ {0,1}  a job of configuration β is on n  d_αn ∈ {0,1}  two jobs of α are on n
    P_αn ≥ 0      what configuration α loses on n   ℓ_o ≥ 0      what j loses with choice o

    Σ_{o∈j} v_o ≤ 1                 Σ_n w_on = k_o v_o (not stay)
    Σ_o p_o w_on + Σ_{stay o} g_jn v_o ≤ G_n
    h_βn ≥ w_on, h_βn ≥ v_o (stay on n)  for α_o = β
    Σ_{α_o = α} (w_on | v_o) − 1 ≤ (m_αn − 1) d_αn
    P_αn ≥ Λ(α|β) h_βn (β ≠ α),  P_αn ≥ Λ(α|α) d_αn
    ℓ_o ≥ P_{α_o n} − Λ̄_α (1 − w_on)  (or 1 − v_o for a stay choice on n)

    maximize (1/C) [W2 Σ_o π_j g_j σ_o v_o − Σ_o c_o ℓ_o − W2 Σ_running g_j (τ/H)(1 − v_stay)]

π_j is the job's priority weight per GPU (`priority`), τ/H the restart cost over the decision's
horizon, c_o a unit of loss's price (`price`: W1 g_j, + W2 π_j g_j σ_o valued as progress). A
job's loss is its worst co-runner's, carried by its choice (one ℓ_j per job under the flat price,
the same for all its choices); every P and ℓ sits at its least bound at an optimum (c > 0 prices
them); with no price (W1 = 0, flat) no contention row is written.
Identical candidates start in order; a stay gets ε more than a move, so a free move is never
made for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.price import loss_price, progress_valued
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import Block, Model, Sense, Take

#: What staying is worth over moving at no cost, per GPU (a tie-break, far below any gain).
STAY_BONUS = 1e-4


def matrix(
    rows: IntArray, cols: IntArray, vals: ArrayLike, shape: tuple[int, int]
) -> sp.coo_matrix:
    """A sparse (rows × cols) block from coordinates, as the model stores it (built once per
    call, so kept in coordinate form: no sorting)."""
    data = np.broadcast_to(np.asarray(vals, dtype=float), np.shape(rows))
    return sp.coo_matrix((data, (rows, cols)), shape=shape)


@dataclass
class Built:
    """The model and the index arrays that explain its variables."""

    model: Model
    v: Block
    w: Block
    pair_choice: IntArray
    pair_node: IntArray
    fixed: BoolArray  # per choice: a stay the solution keeps for certain
    losses: LossIndex | None = None  # the contention columns, when W1 prices them


@dataclass
class LossIndex:
    """Where the contention columns sit and what sets each, so a schedule can be written as a
    complete point of the model (`start`): pieces (column, job, fixed) and their cell, each
    cell's floor, the co-location pairs (cell, live cell, Λ), the twin cells and their Λ."""

    piece_column: IntArray
    piece_owner: IntArray
    piece_fixed: BoolArray
    piece_cell: IntArray
    floor: FloatArray
    loses: Block
    lost: Block | None = None
    colocated: Block | None = None
    live: IntArray | None = None  # cell of each colocated column
    pairs: tuple[IntArray, IntArray, FloatArray] | None = None  # (cell, colocated column, Λ)
    twice: Block | None = None
    twins: tuple[IntArray, FloatArray] | None = None  # (cell, Λ(α|α)) of each twice column


@dataclass
class _Pieces:
    """Every (choice, node) a job may hold: w pairs, then stay pieces (their v), with the
    configuration, the column and the job of each; `fixed` pieces (a running job that cannot
    move) are there whatever the solution."""

    config: IntArray
    node: IntArray
    column: IntArray  # model column: a w pair's, or the stay choice's v
    owner: IntArray  # whose ℓ the piece bounds: its choice's (progress) or its job's (flat)
    fixed: BoolArray


def build(inst: ScheduleInstance, w1: float, restart: float) -> Built:
    model = Model("contention_placement")
    ch = inst.choices
    labels = [inst.job_ids[j] for j in inst.index]
    # A stay is certain where moves are none, or for a pinned job that has no other choice.
    sure = (inst.moves == "none") | (inst.pinned[ch.job] & (inst.moves != "migrate"))
    fixed = ch.stay & sure
    avail = inst.node_gpus.copy()  # what jobs that cannot move leave
    for o in np.flatnonzero(fixed).tolist():
        nodes, gpus = inst.held[int(ch.job[o])]
        avail[nodes] -= gpus
    eligible = (
        ~ch.stay[:, None]
        & (inst.node_type[None, :] == ch.gpu_type[:, None])
        & (avail[None, :] >= ch.per_node[:, None])
    )
    fits = ch.stay | (eligible.sum(axis=1) >= ch.nodes)
    eligible &= fits[:, None]
    pair_choice, pair_node = np.nonzero(eligible)
    v = model.add_variables(
        "run",
        ch.size,
        lower=fixed.astype(float),
        upper=fits.astype(float),
        integer=True,
        coords=(("job", Take(labels, ch.job)),),
    )
    w = model.add_variables(
        "use",
        pair_choice.size,
        upper=1.0,
        integer=True,
        coords=(
            ("job", Take(labels, ch.job[pair_choice])),
            ("node", Take(inst.node_ids, pair_node)),
        ),
    )
    built = Built(model, v, w, pair_choice, pair_node, fixed)
    _placement_rows(inst, built)
    priced = w1 > 0 or inst.contention_value == "progress"
    if priced and inst.loss.size and float(inst.loss.max()) > 0:
        built.losses = _loss_rows(inst, built, _pieces(inst, built))
    _objective(inst, built, built.losses.lost if built.losses else None, w1, restart)
    return built


def _placement_rows(inst: ScheduleInstance, b: Built) -> None:
    ch, model = inst.choices, b.model
    n_pair, n_nodes = b.pair_choice.size, len(inst.node_ids)
    model.add_constraints(
        "run_once",
        {b.v: matrix(ch.job, np.arange(ch.size), 1.0, (inst.size, ch.size))},
        lower=inst.pinned.astype(float),
        upper=1.0,
    )
    moving = np.flatnonzero(~ch.stay)
    rows = np.searchsorted(moving, b.pair_choice)
    model.add_constraints(
        "shape",
        {
            b.w: matrix(rows, np.arange(n_pair), 1.0, (moving.size, n_pair)),
            b.v: matrix(np.arange(moving.size), moving, -ch.nodes[moving], (moving.size, ch.size)),
        },
        lower=0.0,
        upper=0.0,
    )
    use = ch.per_node[b.pair_choice]
    terms = {b.w: matrix(b.pair_node, np.arange(n_pair), use, (n_nodes, n_pair))}
    stay = np.flatnonzero(ch.stay)
    if stay.size:
        held = [inst.held[int(ch.job[o])] for o in stay.tolist()]
        terms[b.v] = matrix(
            np.concatenate([nodes for nodes, _ in held]),
            np.repeat(stay, [nodes.size for nodes, _ in held]),
            np.concatenate([gpus for _, gpus in held]).astype(float),
            (n_nodes, ch.size),
        )
    model.add_constraints(
        "capacity", terms, upper=inst.node_gpus.astype(float), coords=(("node", inst.node_ids),)
    )
    _symmetry_rows(inst, b)


def _symmetry_rows(inst: ScheduleInstance, b: Built) -> None:
    """Members of a group of identical candidates start in order."""
    ch = inst.choices
    first, second = [], []
    for g in np.unique(inst.group).tolist():
        members = np.flatnonzero(inst.group == g)
        first.extend(members[:-1].tolist())
        second.extend(members[1:].tolist())
    if not first:
        return
    incidence = matrix(ch.job, np.arange(ch.size), 1.0, (inst.size, ch.size)).tocsr()
    b.model.add_constraints(
        "symmetry", {b.v: incidence[np.array(second)] - incidence[np.array(first)]}, upper=0.0
    )


def _pieces(inst: ScheduleInstance, b: Built) -> _Pieces:
    ch = inst.choices
    stay = np.flatnonzero(ch.stay)
    nodes = [inst.held[int(ch.job[o])][0] for o in stay.tolist()]
    counts = np.array([n.size for n in nodes], dtype=np.int64)
    stay_choice = np.repeat(stay, counts)
    stay_node = np.concatenate(nodes) if nodes else np.zeros(0, np.int64)
    choice = np.concatenate([b.pair_choice, stay_choice])
    return _Pieces(
        config=ch.config[choice],
        node=np.concatenate([b.pair_node, stay_node]).astype(np.int64),
        column=np.concatenate([b.w.start + np.arange(b.pair_choice.size), b.v.start + stay_choice]),
        owner=choice if progress_valued(inst) else ch.job[choice],
        fixed=np.r_[np.zeros(b.pair_choice.size, bool), b.fixed[stay_choice]],
    )


def _loss_rows(inst: ScheduleInstance, b: Built, pc: _Pieces) -> LossIndex:
    """Presence, pairs of one configuration, what each configuration loses per node, and each
    job's loss (module docstring); returns where their columns are. Pieces that are there
    whatever the solution enter as constants: R_αn, what they make configuration α lose on n,
    bounds P_αn below."""
    model, n_nodes = b.model, len(inst.node_ids)
    loss = inst.loss
    cell = pc.config * n_nodes + pc.node
    target, at = np.unique(cell, return_inverse=True)
    at = at.reshape(-1)
    alpha, node = target // n_nodes, target % n_nodes
    fixed_count = np.bincount(at[pc.fixed], minlength=target.size)
    free_count = np.bincount(at[~pc.fixed], minlength=target.size)
    floor = _floor(loss, alpha, node, fixed_count)
    p = model.add_variables("loses", target.size, lower=floor)
    live = np.flatnonzero(free_count > 0)  # cells a solution may fill or leave empty
    index = LossIndex(pc.column, pc.owner, pc.fixed, at, floor, p)
    if live.size:
        h = model.add_variables("colocated", live.size, upper=1.0, integer=True)
        mine = ~pc.fixed
        rows = np.flatnonzero(mine)
        model.add_constraints(
            "present",
            {
                h: matrix(
                    np.arange(rows.size), np.searchsorted(live, at[rows]), 1.0, (rows.size, h.size)
                ),
                **_columns(model, pc.column[rows], -1.0),
            },
            lower=0.0,
        )
        index.colocated, index.live = h, live
        index.pairs = _next_to_rows(model, (alpha, node), live, (p, h), loss, floor)
        _twin_rows(model, pc, (at, alpha), (fixed_count, free_count), (p, floor), loss, index)
    owners = inst.choices.size if progress_valued(inst) else inst.size
    ell = model.add_variables("lost", owners, lower=0.0)
    index.lost = ell
    big = np.where(pc.fixed, 0.0, loss.max(axis=1)[pc.config])
    n = cell.size
    model.add_constraints(
        "job_loses",
        {
            ell: matrix(np.arange(n), pc.owner, 1.0, (n, ell.size)),
            p: matrix(np.arange(n), at, -1.0, (n, p.size)),
            **_columns(
                model, pc.column[~pc.fixed], -big[~pc.fixed], np.flatnonzero(~pc.fixed), (n, 0)
            ),
        },
        lower=-big,
    )
    return index


def _next_to_rows(
    model: Model,
    cells: tuple[IntArray, IntArray],
    live: IntArray,
    blocks: tuple[Block, Block],
    loss: FloatArray,
    floor: FloatArray,
) -> tuple[IntArray, IntArray, FloatArray]:
    """P_αn ≥ Λ(α|β) h_βn for each cell (α, n) and each other configuration β a solution may put
    on n, where that loss is above the floor; returns the pairs (cell, h column, Λ)."""
    alpha, node = cells
    p, h = blocks
    ti, hi = _on_same_node(node, node[live])
    hurt = (alpha[ti] != alpha[live][hi]) & (loss[alpha[ti], alpha[live][hi]] > floor[ti])
    ti, hi = ti[hurt], hi[hurt]
    lam = loss[alpha[ti], alpha[live][hi]]
    model.add_constraints(
        "loses_next_to",
        {
            p: matrix(np.arange(ti.size), ti, 1.0, (ti.size, p.size)),
            h: matrix(np.arange(ti.size), hi, -lam, (ti.size, h.size)),
        },
        lower=0.0,
    )
    return ti, hi, lam


def _floor(loss: FloatArray, alpha: IntArray, node: IntArray, fixed_count: IntArray) -> FloatArray:
    """R per (α, n) cell: the worst loss the fixed pieces on n impose on configuration α (two
    fixed pieces of α itself count as a pair)."""
    floor = np.zeros(alpha.size)
    fixed = np.flatnonzero(fixed_count > 0)
    if not fixed.size:
        return floor
    cell, at = _on_same_node(node, node[fixed])
    by = fixed[at]
    hit = loss[alpha[cell], alpha[by]]
    hit[(alpha[cell] == alpha[by]) & (fixed_count[by] < 2)] = 0.0
    np.maximum.at(floor, cell, hit)
    return floor


def _on_same_node(a: IntArray, b: IntArray) -> tuple[IntArray, IntArray]:
    """Every pair (i, j) with a[i] = b[j], in row-major order (i, then j), found by sorting b
    rather than comparing every pair."""
    order = np.argsort(b, kind="stable")
    first = np.searchsorted(b[order], a, side="left")
    count = np.searchsorted(b[order], a, side="right") - first
    offset = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    return np.repeat(np.arange(a.size), count), order[np.repeat(first, count) + offset]


def _twin_rows(
    model: Model,
    pc: _Pieces,
    cells: tuple[IntArray, IntArray],
    counts: tuple[IntArray, IntArray],
    loses: tuple[Block, FloatArray],
    loss: FloatArray,
    index: LossIndex,
) -> None:
    """d_αn = 1 when two pieces of α share n (counting fixed ones), where that hurts more than
    the floor: Σ pieces − 1 ≤ (m − 1) d, P_αn ≥ Λ(α|α) d."""
    at, alpha = cells
    fixed_count, free_count = counts
    p, floor = loses
    twin = np.diag(loss)[alpha]
    cand = np.flatnonzero((free_count > 0) & (fixed_count + free_count >= 2) & (fixed_count < 2))
    cand = cand[twin[cand] > floor[cand]]
    if not cand.size:
        return
    d = model.add_variables("colocated_twice", cand.size, upper=1.0, integer=True)
    index.twice, index.twins = d, (cand, twin[cand])
    rows = np.flatnonzero(np.isin(at, cand) & ~pc.fixed)
    total = fixed_count[cand] + free_count[cand]
    model.add_constraints(
        "twice",
        {
            d: sp.diags(-(total - 1.0)).tocoo(),
            **_columns(
                model, pc.column[rows], 1.0, np.searchsorted(cand, at[rows]), (cand.size, 0)
            ),
        },
        upper=1.0 - fixed_count[cand],
    )
    model.add_constraints(
        "loses_next_to_twin",
        {
            p: matrix(np.arange(cand.size), cand, 1.0, (cand.size, p.size)),
            d: sp.diags(-twin[cand]).tocoo(),
        },
        lower=0.0,
    )


def _columns(
    model: Model,
    columns: IntArray,
    values: float | FloatArray,
    rows: IntArray | None = None,
    shape: tuple[int, int] | None = None,
) -> dict[Block, sp.coo_matrix]:
    """A term per variable block for one entry (row i, column columns[i]) per row."""
    rows = np.arange(columns.size) if rows is None else rows
    n_rows = shape[0] if shape is not None else columns.size
    values = np.broadcast_to(np.asarray(values, dtype=float), columns.shape)
    out: dict[Block, sp.coo_matrix] = {}
    for block in model.variables:
        mine = (columns >= block.start) & (columns < block.start + block.size)
        if mine.any():
            out[block] = matrix(
                rows[mine], columns[mine] - block.start, values[mine], (n_rows, block.size)
            )
    return out


def _objective(
    inst: ScheduleInstance, b: Built, loss: Block | None, w1: float, restart: float
) -> None:
    ch, total = inst.choices, float(inst.total_gpus)
    w2 = 1.0 - w1
    g = inst.demand[ch.job].astype(float)
    value = w2 * inst.weight[ch.job] * g * ch.speed
    stay_gain = np.where(ch.stay, w2 * g * (restart + STAY_BONUS), 0.0)
    terms = {b.v: (value + stay_gain) / total}
    offset = -float(stay_gain.sum()) / total
    if loss is not None:  # per choice valued as progress, else per job as it always was
        flat = -w1 * inst.demand.astype(float)
        terms[loss] = (-loss_price(inst, w1) if progress_valued(inst) else flat) / total
    b.model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
