"""Back-fill: jobs an allocation does not cover run on the GPUs its entries leave free.

An allocation covers the jobs it was computed for. A job that arrived since has no time in it
and, under a policy that is re-solved only now and then (Gavel's rule: on an arrival or a
completion once 1,920 s have passed since the last solve), would otherwise wait for the next
solve with GPUs free. Gavel gives such jobs priority 0 on every type: they run after every entry
with time, wherever GPUs are left. Here, after the round's entries are served: the given jobs in
their order (the caller's: arrival), each on the first of its types, fastest first, that still
has its whole gang free and where it makes progress. Their assignments carry priority 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from apportion.mechanism.arrays import Combos
from apportion.mechanism.priority import Selection
from apportion.solver.arraytypes import FloatArray


def backfill(
    selection: Selection, combos: Combos, speed: FloatArray, jobs: Sequence[int]
) -> Selection:
    """`selection` with the `jobs` (rows without time) that fit in what it left free."""
    free = selection.free.copy()
    rows, types = list(selection.rows), list(selection.types)
    for j in jobs:
        if not free.any():
            break
        gang = int(combos.scale[j])
        for k in np.argsort(-speed[j], kind="stable").tolist():
            if speed[j, k] <= 0:
                break
            if gang <= free[k]:
                free[k] -= gang
                rows.append(j)  # served at priority 0: it has no time in the allocation
                types.append(k)
                break
    return Selection(rows, types, selection.priority, free, selection.reasons)
