"""How Gavel's simulator enacts an allocation, where it differs from the defaults
(`SimConfig.round_rule = "gavel"`; its scheduler.py, `_schedule_jobs_on_workers`).

- Entries without time (`Spare`): every job the allocation covers may run at priority 0 on
  any type where it has none, after the entries with time of that type's queue; none under
  Gavel's FIFO policies, whose allocations say who runs and who waits.
- A heterogeneity-agnostic policy (Gavel's agnostic max-min and makespan): Gavel's simulator
  serves the per-type queues in a random order each round (it keeps V100, P100, K80 only for
  its `_Perf` and `_Packing` policies), and the allocation it enacts is its interior-point
  solver's. The agnostic LP plans the same speed on every type, so any split of a job's time
  over types is as good to it; the solver returns the centre of that face of optima, where
  each job's time is spread over every type its gang fits, about in proportion to their GPUs
  (measured on Gavel's code: 0.16 / 0.33 / 0.51 of a job's time on 8 V100 / 16 P100 / 24 K80
  when contended). `spread` enacts an agnostic answer so; the vertex an exact solver returns
  instead puts each job on one or two types, which the fastest-first queues then favour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from apportion.mechanism.arrays import Allocation, Spare
from apportion.mechanism.priority import Rule
from apportion.simulator.config import SimConfig
from apportion.solver.result.table import JobTable

#: The simulator's heterogeneity-agnostic policies (`simulator.policies.VARIANTS`).
AGNOSTIC = frozenset({"max_min_agnostic", "makespan_agnostic"})


def gavels(config: SimConfig) -> bool:
    return config.round_rule == Rule.GAVEL


def spare(config: SimConfig) -> Spare:
    """The entries without time a round serves (module docstring)."""
    if not gavels(config):
        return Spare.UP
    return Spare.NONE if config.policy == "fifo" else Spare.ANY


def agnostic(config: SimConfig) -> bool:
    """Enacted as Gavel enacts its agnostic policies (module docstring)."""
    unaware = config.options.get("heterogeneity_aware") is False
    return gavels(config) and (config.policy in AGNOSTIC or unaware)


def spread(allocation: Allocation, gpus: Mapping[str, int], scale: Mapping[str, int]) -> Allocation:
    """Each job's total time fraction over the types its gang fits (`scale`: job → gang), in
    proportion to their GPUs; `allocation` itself when that would over-fill a type (a job
    held off a type by its gang, its share going to the others)."""
    ids, names, x = _matrix(allocation)
    if not ids:
        return allocation
    n = np.array([float(gpus.get(k, 0)) for k in names])
    s = np.array([float(scale[j]) for j in ids])
    fits = s[:, None] <= n[None, :]
    room = (fits * n).sum(axis=1)
    out = np.where(fits, x.sum(axis=1)[:, None] * n / np.where(room > 0, room, 1.0)[:, None], 0.0)
    if ((s @ out) > n + 1e-9).any():
        return allocation
    return {j: dict(zip(names, row.tolist(), strict=True)) for j, row in zip(ids, out, strict=True)}


def _matrix(allocation: Allocation) -> tuple[Sequence[str], list[str], np.ndarray]:
    if isinstance(allocation, JobTable):
        return list(allocation.ids), list(allocation.gpu_names), np.asarray(allocation.allocation)
    ids = list(allocation)
    names = sorted({k for row in allocation.values() for k in row})
    x = np.array([[allocation[j].get(k, 0.0) for k in names] for j in ids]).reshape(len(ids), -1)
    return ids, names, x
