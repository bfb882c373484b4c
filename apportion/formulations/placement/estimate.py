"""A linear estimate of the pooled placement model, for a start under a time limit.

The pooled model's rows that every placement meets (shapes, distinct nodes, group sizes, free
GPUs) with contention priced per piece, from running jobs only:

    maximize  W2 · Σ_f d_f s_f / G  −  W1/m · Σ_fn c_fn u_fn
    c_fn = (R_αn − 1) + Σ_{running r on n} (CS(α_r | α) − K_r)⁺      for multi-node f, else 0

A piece pays its node's whole excess even when another piece of the same job is worse (the job
suffers only its worst), and a running job pays once per piece; candidates next to each other
are not priced at all. So the estimate is neither a bound nor exact, and its placement is only
ever scored by the evaluator. What it gets right is the packing, which the utilization term
rewards most and a greedy start gets wrong: which jobs start, with which shapes, filling which
leftovers. Without level counters or co-location indicators it is a small packing MILP.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.pooled.counters import Counters
from apportion.formulations.placement.pooled.families import families
from apportion.formulations.placement.pooled.model import Pooled, placement_rows
from apportion.formulations.placement.running import running_floor, running_pieces, running_worst
from apportion.solver.arraytypes import FloatArray
from apportion.solver.model import Model, Sense


def piece_costs(inst: Instance) -> FloatArray:
    """c[α, n]: the estimated contention a piece of configuration α adds on node n."""
    floor = running_floor(inst)
    job, node = running_pieces(inst)
    hurt = np.zeros((len(inst.configs), len(inst.node_ids)))
    excess = np.maximum(inst.cs[inst.running_config[job]] - floor[job][:, None], 0.0)
    np.add.at(hurt.T, node, excess)
    return running_worst(inst) - 1.0 + hurt


def build(inst: Instance, w1: float) -> Pooled:
    """The estimate as a model; `pooled.decode` reads its solutions."""
    fam = families(inst)
    model = Model("contention_placement_estimate")
    s, u = placement_rows(model, inst, fam)
    multi = fam.nodes[fam.pair_family] > 1
    cost = np.where(multi, piece_costs(inst)[fam.config[fam.pair_family], fam.pair_node], 0.0)
    model.set_objective(
        {
            s: (1.0 - w1) * fam.demand / inst.total_gpus,
            u: -w1 * cost / inst.num_jobs,
        },
        Sense.MAXIMIZE,
    )
    none = Counters.none()
    return Pooled(model, fam, s, u, none, none)
