"""Variables over the cells (α, n) of a (configurations × nodes) mask: the co-location
indicators and suffering levels the worst-co-runner rows are written in, shared by the
candidates' side (`worst`) and the running jobs' side (`running`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.placement.instance import Instance
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.model import Block, Model, Take


@dataclass
class Indexed:
    """Variables over the true cells of a (configs × nodes) mask."""

    block: Block
    index: IntArray  # position of cell (α, n) in the block, -1 where absent


def indexed(
    model: Model,
    name: str,
    mask: BoolArray,
    inst: Instance,
    *,
    integer: bool,
    lower: float | FloatArray,
) -> Indexed:
    """One variable per true cell of `mask`, binary when `integer`, labelled by configuration
    and node."""
    cfg, node = np.nonzero(mask)
    labels = [",".join(map(str, c)) for c in inst.configs]
    block = model.add_variables(
        name,
        cfg.size,
        lower=lower,
        upper=1.0 if integer else np.inf,
        integer=integer,
        coords=(("config", Take(labels, cfg)), ("node", Take(inst.node_ids, node))),
    )
    index = np.full(mask.shape, -1, dtype=np.int64)
    index[cfg, node] = np.arange(cfg.size)
    return Indexed(block, index)
