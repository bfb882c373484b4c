"""The per-candidate model: the placement core (`model`) with the chosen penalty's rows
(`worst` or `additive`) under the objective W2·U − W1·Φ (or, on a `reference.priced` instance,
W2·U − W1·μ with the rows of `reference`), and how a placement is read from it and written back
as a start."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.additive import add_additive
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.model import Placement, add_placement
from apportion.formulations.placement.options import ContentionPlacementOptions
from apportion.formulations.placement.reference import add_mean_loss, loss_start
from apportion.formulations.placement.worst import Penalty, add_worst
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Model, Sense


def build(
    inst: Instance,
    options: ContentionPlacementOptions,
    modeled: NDArray[np.bool_] | None = None,
) -> tuple[Model, Placement]:
    """maximize W2·U − W1·Φ (or W2·U − W1·μ) over the placement rows and the chosen penalty's
    rows."""
    model = Model("contention_placement")
    placement = add_placement(model, inst)
    w1 = options.w1
    w2 = 1.0 - w1
    m, total = inst.num_jobs, inst.total_gpus
    g_running = sum(int(g.sum()) for g in inst.running_gpus)
    demand = inst.demand[inst.options.candidate].astype(float)
    penalty = Penalty({}, float(m))  # every job at CS 1 when contention has no weight
    if w1 > 0:
        if options.penalty == "worst":
            penalty = add_worst(model, inst, placement, modeled)
        else:
            penalty = add_additive(model, inst, placement)
    terms = {placement.v: w2 * demand / total}
    offset = w2 * g_running / total
    if inst.reference and w1 > 0:
        # N = Σ_held (c − 1) = Σ_all c − M: a waiting job's c is 1.
        placement.loss = add_mean_loss(
            model, inst, penalty.terms, penalty.constant - m, placement.v
        )
        if placement.loss is not None:
            terms[placement.loss.mean] = np.array([-w1])
    else:
        for block, coefficients in penalty.terms.items():
            if block.size:
                terms[block] = -w1 * coefficients / m
        offset -= w1 * penalty.constant / m
    model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
    return model, placement


def decode(inst: Instance, pl: Placement, x: FloatArray) -> Started:
    """Started candidates: job index → (option, node indices), read from the solution. Pooled
    single-node counts go to the group's members that did not start otherwise, in order."""
    v = np.rint(x[pl.v.span]).astype(np.int64)
    w = np.rint(x[pl.w.span]).astype(np.int64)
    opts = inst.options
    started: Started = {}
    for o in np.flatnonzero((v > 0) & ~opts.pooled).tolist():
        nodes = pl.pair_node[(pl.pair_option == o) & (w > 0)].tolist()
        started[int(inst.candidates[opts.candidate[o]])] = (o, nodes)
    for o in np.flatnonzero((v > 0) & opts.pooled).tolist():
        members = np.flatnonzero(inst.group == inst.group[opts.candidate[o]])
        idle = iter(j for j in inst.candidates[members].tolist() if j not in started)
        for pair in np.flatnonzero((pl.pair_option == o) & (w > 0)).tolist():
            for _ in range(int(w[pair])):
                started[next(idle)] = (o, [int(pl.pair_node[pair])])
    return started


def start_vector(inst: Instance, pl: Placement, started: Started) -> tuple[IntArray, FloatArray]:
    """The placement decisions (start, use) of `started` as a sparse MILP starting point."""
    v = np.zeros(pl.v.size)
    w = np.zeros(pl.w.size)
    pair_at = {
        (o, n): i
        for i, (o, n) in enumerate(zip(pl.pair_option.tolist(), pl.pair_node.tolist(), strict=True))
    }
    for o, nodes in started.values():
        v[o] += 1.0
        for n in nodes:
            w[pair_at[(o, n)]] += 1.0
    index = np.concatenate(
        [
            np.arange(pl.v.start, pl.v.start + pl.v.size),
            np.arange(pl.w.start, pl.w.start + pl.w.size),
        ]
    )
    if pl.loss is None:
        return index.astype(np.int64), np.concatenate([v, w])
    loss_index, loss_values = loss_start(inst, pl.loss, started)
    return np.concatenate([index, loss_index]).astype(np.int64), np.concatenate([v, w, loss_values])
