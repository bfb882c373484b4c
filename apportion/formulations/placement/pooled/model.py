"""The pooled model as a whole: a family's starts and pieces with the rows every placement
meets, the level counters, and the objective.

    s_f ∈ ℤ₊                      jobs of the family's group started with its shape
    u_fn ∈ ℤ₊, u_fn ≤ b_fn        their pieces on node n
    Σ_n u_fn = k_f s_f            k pieces per job
    u_fn ≤ s_f                    a job uses a node at most once
    Σ_{f∈g} s_f ≤ m_g             the group's size
    Σ_f p_f u_fn ≤ F_n            free GPUs
    maximize  W2 · U − W1 · Φ     with Σ CS from the counters of the families' jobs (`excess`)
                                  and of the running jobs (`running`)
    (or W2 · U − W1 · μ on a `reference.priced` instance, μ ≥ (Σ CS − M)/(R + Σ_f s_f) by the
    rows of `reference`)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.counters import Counters
from apportion.formulations.placement.pooled.excess import own_rows
from apportion.formulations.placement.pooled.families import Families, families
from apportion.formulations.placement.pooled.running import running_rows
from apportion.formulations.placement.reference import MeanLoss, add_mean_loss
from apportion.formulations.placement.running import running_floor
from apportion.solver.arraytypes import BoolArray, FloatArray
from apportion.solver.model import Block, Model, Sense


@dataclass
class Pooled:
    """A pooled model (or the estimate, which has no counters) and the blocks decode and
    encode read."""

    model: Model
    families: Families
    s: Block
    u: Block
    own: Counters
    running: Counters
    loss: MeanLoss | None = None  # the reference objective's rows


def build(inst: Instance, w1: float, modeled: BoolArray, lifted: bool = False) -> Pooled:
    """maximize W2·U − W1·Φ over the rows of the package's modules; candidate co-runner rows
    only for the configuration pairs in `modeled`; with `lifted`, the rows that count pieces at
    or above a level also count those a candidate co-runner lifts there (`met`)."""
    fam = families(inst)
    model = Model("contention_placement_pooled")
    s, u = placement_rows(model, inst, fam)
    own = own_rows(model, inst, fam, s, u, modeled, lifted)
    running = running_rows(model, inst, fam, u)
    m, total = inst.num_jobs, inst.total_gpus
    w2 = 1.0 - w1
    g_running = sum(int(g.sum()) for g in inst.running_gpus)
    terms: dict[Block, FloatArray] = {s: w2 * fam.demand / total}
    excess = {c.block: c.delta for c in (own, running) if c.block is not None}
    # Every candidate counts 1 (waiting, or started before its excess), running jobs K_r.
    constant = float(running_floor(inst).sum()) + inst.candidates.size
    offset = w2 * g_running / total
    loss = None
    if inst.reference:
        loss = add_mean_loss(model, inst, excess, constant - m, s) if w1 > 0 else None
        if loss is not None:
            terms[loss.mean] = np.array([-w1])
    else:
        terms.update({block: -w1 * delta / m for block, delta in excess.items()})
        offset -= w1 * constant / m
    model.set_objective(terms, Sense.MAXIMIZE, offset=offset)
    return Pooled(model, fam, s, u, own, running, loss)


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
