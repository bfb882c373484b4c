"""Candidate co-runners in the pooled model: where a family's pieces may meet a configuration
that raises what they suffer (*triggers*), and the indicators that tell whether it is there.

A trigger (f, n, β) is a multi-node family f with pieces on node n, and a configuration β of
multi-node candidates that may be on n too (priced, fitting next to f's piece) with
CS(α_f | β) > R_αn. Its indicator is
    h_βn ∈ {0,1},   h_βn ≥ u_fn / b_fn   for every family f of configuration β ≠ α
                    (a piece of β is on n)
    h2_αn ∈ {0,1},  Σ_{f of config α} u_fn − 1 ≤ (pieces of α that fit n − 1) · h2_αn
                    (another piece of α itself is on n)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.families import Families
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import Block, Model


@dataclass
class Triggers:
    """Candidate co-runner cases: family f's pieces on node n meet configuration β there."""

    family: IntArray
    pair: IntArray  # (family, node) pair index
    beta: IntArray
    value: FloatArray  # CS(α_f | β)


def candidate_triggers(
    inst: Instance, fam: Families, base: FloatArray, modeled: BoolArray
) -> Triggers:
    """The triggers of the configuration pairs in `modeled`; `base` is R (configs × nodes)."""
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


def colocation(
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
    return _once(model, fam, u, need), _twice(model, inst, fam, u, need2)


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


def _once(model: Model, fam: Families, u: Block, mask: BoolArray) -> Colocation:
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
