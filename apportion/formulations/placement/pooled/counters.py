"""Level counters: how the pooled model prices a worst-co-runner max without a copy per job.

With levels L_1 < L_2 < … of the values a job's CS can take (L_0 its floor) and t_l the number
of jobs whose CS reaches L_l,
    Σ_jobs (CS_j − L_0) = Σ_l (L_l − L_{l−1}) t_l,    t_l ≥ t_{l+1}
(a job that reaches a level reaches every level below it). The rows that bound t from below
are the families' (`excess`) and the running jobs' (`running`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from apportion.formulations.placement.model import matrix
from apportion.formulations.placement.pooled.colocation import Colocation
from apportion.formulations.placement.pooled.met import Met
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model


@dataclass
class Counters:
    """Level counters (t of a family, or z of a running job): the block, whose counter each
    column is and the level it counts, and the indicators the rows need."""

    block: Block | None
    owner: IntArray  # family (t) or running job position (z)
    level: FloatArray
    delta: FloatArray  # L_l − L_{l−1}: the objective weight
    h: Colocation | None = None
    h2: Colocation | None = None
    met: Met | None = None

    @classmethod
    def none(cls) -> Counters:
        """No counters: nothing to price above the floor."""
        return cls(None, np.zeros(0, np.int64), np.zeros(0), np.zeros(0))


def chain_rows(model: Model, name: str, counters: Block, chain: list[int]) -> None:
    """counter_i ≥ counter_{i+1} for each i in `chain`: a job that reaches a level reaches every
    level below it."""
    if not chain:
        return
    c = np.array(chain)
    rows = np.arange(c.size)
    shape = (c.size, counters.size)
    model.add_constraints(
        name,
        {counters: matrix(rows, c, 1.0, shape) - matrix(rows, c + 1, 1.0, shape)},
        lower=0.0,
    )


def levels(values: FloatArray) -> tuple[FloatArray, IntArray]:
    """Distinct values and each value's level index."""
    found, index = np.unique(values, return_inverse=True)
    return found, index.reshape(-1)
