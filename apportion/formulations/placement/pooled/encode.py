"""A placement written as a complete start of the pooled model: starts and pieces, the level
counters at the placement's true CS (which meets every row) and the indicators at what the
placement co-locates, so the solver starts from an incumbent without a search to complete it."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.placement.evaluate import evaluate
from apportion.formulations.placement.instance import Instance, Started
from apportion.formulations.placement.pooled.decode import piece_worst
from apportion.formulations.placement.pooled.families import Families
from apportion.formulations.placement.pooled.model import Pooled
from apportion.formulations.placement.reference import loss_start
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block


def encode(inst: Instance, pooled: Pooled, started: Started) -> tuple[IntArray, FloatArray]:
    """The start as (column indices, values)."""
    fam = pooled.families
    s, u, family_of = _starts(inst, fam, started)
    columns: list[Block] = [pooled.s, pooled.u]
    values: list[NDArray[np.generic]] = [s, u]
    _counters(inst, pooled, started, family_of, columns, values)
    _indicators(inst, pooled, u, columns, values)
    index = np.concatenate([np.arange(b.start, b.start + b.size) for b in columns])
    start = index.astype(np.int64), np.concatenate([np.asarray(v, float) for v in values])
    if pooled.loss is None:
        return start
    loss_index, loss_values = loss_start(inst, pooled.loss, started)
    return np.concatenate([start[0], loss_index]), np.concatenate([start[1], loss_values])


def _starts(
    inst: Instance, fam: Families, started: Started
) -> tuple[FloatArray, FloatArray, dict[int, int]]:
    """s and u of the placement, and each started job's family."""
    opts = inst.options
    key = {
        (int(g), int(k), int(p), int(t)): f
        for f, (g, k, p, t) in enumerate(
            zip(fam.group, fam.nodes, fam.per_node, opts.gpu_type[fam.option], strict=True)
        )
    }
    pair_of = {
        (int(f), int(n)): q
        for q, (f, n) in enumerate(zip(fam.pair_family, fam.pair_node, strict=True))
    }
    s = np.zeros(fam.count)
    u = np.zeros(fam.pair_family.size)
    family_of: dict[int, int] = {}
    for j, (o, nodes) in started.items():
        g = int(inst.group[np.searchsorted(inst.candidates, j)])
        f = key[(g, int(opts.nodes[o]), int(opts.per_node[o]), int(opts.gpu_type[o]))]
        family_of[j] = f
        s[f] += 1
        for n in nodes:
            u[pair_of[(f, n)]] += 1
    return s, u, family_of


def _counters(
    inst: Instance,
    pooled: Pooled,
    started: Started,
    family_of: dict[int, int],
    columns: list[Block],
    values: list[NDArray[np.generic]],
) -> None:
    """t: the family's jobs whose true CS reaches the level; z: whether the running job's does."""
    cs = inst.priced(evaluate(inst, started, 0.5, "worst").cs)
    own = pooled.own
    if own.block is not None:
        jobs_cs = np.array([cs[j] for j in family_of])
        jobs_family = np.array(list(family_of.values()), dtype=np.int64)
        reach = jobs_cs[None, :] >= own.level[:, None] - 1e-9
        values.append((reach & (jobs_family[None, :] == own.owner[:, None])).sum(axis=1))
        columns.append(own.block)
    running = pooled.running
    if running.block is not None:
        values.append(cs[inst.running[running.owner]] >= running.level - 1e-9)
        columns.append(running.block)


def _indicators(
    inst: Instance,
    pooled: Pooled,
    u: FloatArray,
    columns: list[Block],
    values: list[NDArray[np.generic]],
) -> None:
    """h (a piece of the configuration on the node), h2 (two of them) and the lifted cells."""
    fam, own = pooled.families, pooled.own
    multi = np.where(fam.nodes[fam.pair_family] > 1, u, 0.0)
    count = np.zeros((len(inst.configs), len(inst.node_ids)))
    np.add.at(count, (fam.config[fam.pair_family], fam.pair_node), multi)
    for cells, least in ((own.h, 1), (own.h2, 2)):
        if cells is not None and cells.block is not None:
            cfg, node = np.nonzero(cells.index >= 0)
            value = np.zeros(cells.block.size)
            value[cells.index[cfg, node]] = count[cfg, node] >= least
            values.append(value)
            columns.append(cells.block)
    if own.met is not None:
        # w at its lower bound: the pair's pieces when a candidate lifts them to the cell's value
        worst = piece_worst(inst, fam, u.astype(np.int64))
        lifted = worst[own.met.pair] >= own.met.value - 1e-12
        values.append(np.where(lifted, u[own.met.pair], 0.0))
        columns.append(own.met.block)
