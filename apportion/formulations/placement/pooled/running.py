"""What running jobs suffer from the pooled model's pieces: the z rows.

With K_r what running job r suffers from its running co-runners and levels L_r1 < L_r2 < … of
the CS(α_r | α_f) above K_r (`counters`),
    CS_r = K_r + Σ_l (L_rl − L_r,l−1) z_rl,   z_rl ∈ {0,1},  z_rl ≥ z_r,l+1,
    z_rl ≥ u_fn / b_fn              (n a node of r, f multi-node with CS(α_r|α_f) ≥ L_rl)
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.placement.instance import Instance
from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.counters import Counters, chain_rows, levels
from apportion.formulations.placement.pooled.families import Families
from apportion.formulations.placement.running import running_floor
from apportion.solver.arraytypes import IntArray
from apportion.solver.model import Block, Model


def running_rows(model: Model, inst: Instance, fam: Families, u: Block) -> Counters:
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
        found, index = levels(value)
        start = len(z_delta)
        z_delta.extend(np.diff(found, prepend=floor[r]).tolist())
        z_owner.extend([r] * found.size)
        z_level.extend(found.tolist())
        chain.extend(range(start, start + found.size - 1))
        rows.append(start + index)
        cols.append(near)
    if not z_delta:
        return Counters.none()
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
    chain_rows(model, "running_excess_chain", z, chain)
    return Counters(z, np.array(z_owner), np.array(z_level), np.array(z_delta))
