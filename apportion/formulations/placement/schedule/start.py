"""A schedule as a MILP starting point: every column of the model, not only the choices.

HiGHS completes a partial start by solving a MIP with the given columns fixed, a presolve and
an LP of the whole model: seconds at 128 nodes, more than a short time limit holds. The
contention columns follow from the choices by their rows (`model.LossIndex`): a configuration is
present on a node where one of its pieces runs, doubled where two do, loses there the worst Λ of
what is present (at least its floor), and a job (its choice, under the progress price) loses
the most of its cells.
"""

from __future__ import annotations

import numpy as np

from apportion.formulations.placement.schedule.evaluate import Decision
from apportion.formulations.placement.schedule.instance import ScheduleInstance
from apportion.formulations.placement.schedule.model import Built, LossIndex
from apportion.solver.arraytypes import FloatArray, IntArray


def start_vector(
    inst: ScheduleInstance, built: Built, decision: Decision
) -> tuple[IntArray, FloatArray]:
    """`decision` as a complete MILP starting point (column indices, values)."""
    x = np.zeros(built.model.num_cols)
    pair_at = {
        (o, n): i
        for i, (o, n) in enumerate(
            zip(built.pair_choice.tolist(), built.pair_node.tolist(), strict=True)
        )
    }
    for o, nodes in decision.values():
        x[built.v.start + o] = 1.0
        if not inst.choices.stay[o]:
            for n in nodes:
                x[built.w.start + pair_at[(o, n)]] = 1.0
    if built.losses is not None:
        _contention(built.losses, x)
    return np.arange(x.size, dtype=np.int64), x


def _contention(ix: LossIndex, x: FloatArray) -> None:
    """The least contention columns the choices in `x` allow, written into `x`."""
    active = (x[ix.piece_column] > 0.5) | ix.piece_fixed
    cells = ix.floor.size
    loses = ix.floor.copy()
    if ix.colocated is not None and ix.live is not None and ix.pairs is not None:
        present = np.bincount(ix.piece_cell[active & ~ix.piece_fixed], minlength=cells) > 0
        h = present[ix.live].astype(float)
        x[ix.colocated.span] = h
        cell, column, lam = ix.pairs
        np.maximum.at(loses, cell, lam * h[column])
    if ix.twice is not None and ix.twins is not None:
        cell, lam = ix.twins
        d = (np.bincount(ix.piece_cell[active], minlength=cells)[cell] >= 2).astype(float)
        x[ix.twice.span] = d
        np.maximum.at(loses, cell, lam * d)
    x[ix.loses.span] = loses
    if ix.lost is not None:
        lost = np.zeros(ix.lost.size)
        np.maximum.at(lost, ix.piece_owner[active], loses[ix.piece_cell[active]])
        x[ix.lost.span] = lost
