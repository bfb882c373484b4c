"""Reading a placement back from a pooled solution: each family's started jobs, their pieces
grouped into jobs on distinct nodes (`grouping`), worst pieces together, and the group's
members taking the jobs in order."""

from __future__ import annotations

import numpy as np

from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.pooled.families import Families
from apportion.formulations.placement.pooled.grouping import group_pieces
from apportion.formulations.placement.pooled.model import Pooled
from apportion.formulations.placement.running import running_worst
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.context import SolveContext


def decode(
    inst: Instance, pooled: Pooled, x: FloatArray, ctx: SolveContext | None = None
) -> Started:
    """Started candidates (job index → option, nodes) from a solution: each family's pieces are
    grouped into jobs in order of what they suffer on their node, worst first, so the worst
    pieces share jobs; the group's members take the jobs in order. A grouping that needs the
    assignment MILP solves it in `ctx`."""
    fam = pooled.families
    s = np.rint(x[pooled.s.span]).astype(np.int64)
    u = np.rint(x[pooled.u.span]).astype(np.int64)
    worst = piece_worst(inst, fam, u)
    idle = {int(g): iter(inst.candidates[inst.group == g].tolist()) for g in np.unique(fam.group)}
    started: Started = {}
    for f in np.flatnonzero(s > 0).tolist():
        pairs = np.flatnonzero((fam.pair_family == f) & (u > 0))
        jobs = group_pieces(
            fam.pair_node[pairs], u[pairs], worst[pairs], int(s[f]), int(fam.nodes[f]), ctx
        )
        for nodes in jobs:
            j = next(idle[int(fam.group[f])])
            started[j] = (_option_of(inst, j, int(fam.option[f])), nodes)
    return started


def piece_worst(inst: Instance, fam: Families, u: IntArray) -> FloatArray:
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
