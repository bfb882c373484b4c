"""Additive contention rows: c_j = 1 + Σ over co-runners b of (CS(α_j | α_b) − 1).

Σ_j c_j is then a sum over co-located pairs, each unordered pair {a, b} adding
d_ab = (CS(α_a|α_b) − 1) + (CS(α_b|α_a) − 1). Per option pair (o of candidate a, o' of candidate
b ≠ a) and per option o next to running job r:

    y_oo' ≥ w_on + w_o'n − 1     ∀ n where both fit together (p_o + p_o' ≤ F_n)
    y_or  ≥ w_on                 ∀ n ∈ nodes(r)
    0 ≤ y ≤ 1, objective term d · y

y needs no integrality: with integral w, minimizing d · y sets it to the co-location
indicator. The model grows with the square of the options, so this variant suits small and
medium instances; the worst-co-runner penalty is the scalable one.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import Placement, matrix
from apportion.formulations.placement.running import running_pieces
from apportion.formulations.placement.worst import Penalty
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model, Take


def running_constant(inst: Instance) -> float:
    """Σ over running jobs of 1 + Σ_running co-runners (CS − 1)."""
    total = float(inst.running.size)
    by_node: dict[int, set[int]] = {}
    for r, nodes in enumerate(inst.running_nodes):
        for n in nodes.tolist():
            by_node.setdefault(n, set()).add(r)
    for r, nodes in enumerate(inst.running_nodes):
        others = set().union(*(by_node[n] for n in nodes.tolist())) - {r}
        total += sum(inst.cs[inst.running_config[r], inst.running_config[q]] - 1 for q in others)
    return total


def add_additive(model: Model, inst: Instance, pl: Placement) -> Penalty:
    """The rows of the module docstring: candidate pairs, then candidates next to running
    jobs."""
    pair_at = np.full((inst.options.size, len(inst.node_ids)), -1, dtype=np.int64)
    pair_at[pl.pair_option, pl.pair_node] = np.arange(pl.num_pairs)
    y, d_y = _candidate_pairs(model, inst, pl, pair_at)
    z, d_z = _running_pairs(model, inst, pl, pair_at)
    return Penalty({y: d_y, z: d_z}, running_constant(inst) + float(inst.candidates.size))


def _candidate_pairs(
    model: Model, inst: Instance, pl: Placement, pair_at: IntArray
) -> tuple[Block, FloatArray]:
    """y_oo' ≥ w_on + w_o'n − 1 for option pairs of different candidates that both fit some
    node together and cost something there; returns y and d per y."""
    opts = inst.options
    excess = inst.cs - 1.0
    n_opt = opts.size
    labels = [inst.job_ids[j] for j in inst.candidates]
    d = excess[opts.config][:, opts.config]
    d = d + d.T
    upper = np.triu(np.ones((n_opt, n_opt), bool), 1)
    o1, o2 = np.nonzero(upper & (opts.candidate[:, None] != opts.candidate[None, :]) & (d > 0))
    together = (
        pl.eligible[o1]
        & pl.eligible[o2]
        & ((opts.per_node[o1] + opts.per_node[o2])[:, None] <= inst.free[None, :])
    )
    keep = together.any(axis=1)
    o1, o2, together = o1[keep], o2[keep], together[keep]
    y = model.add_variables(
        "colocated_pair",
        o1.size,
        upper=1.0,
        coords=(
            ("job", Take(labels, opts.candidate[o1])),
            ("with", Take(labels, opts.candidate[o2])),
        ),
    )
    row, n = np.nonzero(together)
    if row.size:
        r = np.arange(row.size)
        model.add_constraints(
            "colocated_pair_link",
            {
                y: matrix(r, row, 1.0, (r.size, y.size)),
                pl.w: matrix(r, pair_at[o1[row], n], -1.0, (r.size, pl.num_pairs))
                + matrix(r, pair_at[o2[row], n], -1.0, (r.size, pl.num_pairs)),
            },
            lower=-1.0,
        )
    return y, d[o1, o2]


def _running_pairs(
    model: Model, inst: Instance, pl: Placement, pair_at: IntArray
) -> tuple[Block, FloatArray]:
    """y_or ≥ w_on for option o on a node n of running job r where the pair costs something;
    returns y and d per y."""
    opts = inst.options
    excess = inst.cs - 1.0
    labels = [inst.job_ids[j] for j in inst.candidates]
    r_job, r_node = running_pieces(inst)
    r_cfg = inst.running_config[r_job]
    d_run = excess[opts.config][:, r_cfg] + excess[r_cfg][:, opts.config].T  # options × pieces
    touch = (d_run > 0) & (pair_at[:, r_node] >= 0)
    o, piece = np.nonzero(touch)
    key, inverse = np.unique(np.stack([o, r_job[piece]]), axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    run_labels = [inst.job_ids[j] for j in inst.running]
    z = model.add_variables(
        "next_to_running",
        key.shape[1],
        upper=1.0,
        coords=(("job", Take(labels, opts.candidate[key[0]])), ("with", Take(run_labels, key[1]))),
    )
    if o.size:
        r = np.arange(o.size)
        model.add_constraints(
            "next_to_running_link",
            {
                z: matrix(r, inverse, 1.0, (r.size, z.size)),
                pl.w: matrix(r, pair_at[o, r_node[piece]], -1.0, (r.size, pl.num_pairs)),
            },
            lower=0.0,
        )
    weight_z = d_run[key[0], np.searchsorted(r_job, key[1])] if key.size else np.zeros(0)
    return z, weight_z
