"""Which SLOs to meet when not all can be: two MILPs, lexicographic (FORMULATIONS §4).

Per job, with required throughput d_j, value v_j (1 to count SLOs, w_j to weigh them) and a
binary z_j (SLO met), the problem is

    phase 1:  V* = maximize Σ_j v_j z_j
    phase 2:  minimize Σ_k p_k Σ_j s_j X_jk  subject to  Σ_j v_j z_j ≥ V* − δ
    both s.t. Σ_k T_jk X_jk ≥ d_j z_j,  Σ_k X_jk ≤ z_j,  Σ_j s_j X_jk ≤ N_k,  X ≥ 0,  z ∈ {0, 1}

(a job whose SLO is given up gets no time: it would only cost). δ = 0.5 when counting (values are
integers) and 1e-9·V* for weights, so phase 2 finds the cheapest allocation among *all* sets of
maximum value, not merely the cheapest way to meet the set phase 1 happened to return.

Solved over groups g (same usable T, scale factor, value, and demand interval; see
`demand_groups`) with an integer q_g = SLOs met in g. Within a group, meeting the q smallest
demands is never worse than meeting any other q (P(d) ⊇ P(d') when d ≤ d'), and those q jobs sum
exactly to {Y : Σ_k Y_k ≤ q, T·Y ≥ D_g(q)}, D_g(q) = sum of the q smallest demands. D_g is convex
and piecewise linear in q, so T·Y ≥ D_g(q) is exactly the rows

    T_g·Y_g ≥ D_g(i) + d_g,(i+1)·(q_g − i)      for i = 0 … n_g − 1  (one row per job),

with Σ_k Y_gk ≤ q_g, Σ_g s_g Y_gk ≤ N_k and 0 ≤ q_g ≤ n_g integer. Same optimum as the per-job
MILP with a few hundred integers instead of one per job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from apportion.formulations.allocation import Allocation, add_allocation
from apportion.formulations.objectives.demand_groups import (
    interval_ids,
    job_classes,
    refine,
    split_groups,
)
from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.backends import Solution
from apportion.solver.context import SolveContext, SolveRequest
from apportion.solver.model import Block, Model, Sense
from apportion.solver.status import Status

VALUE_GAP = 1e-9  # phase 1 must be exact: which SLOs are met is the answer
COST_GAP = 1e-6  # phase 2: cost within 1e-6 (relative) of the optimum


@dataclass(frozen=True)
class Candidates:
    """Jobs whose SLOs are in play (arrays are per candidate)."""

    throughput: FloatArray  # (c, K) usable T, 0 elsewhere
    scale: FloatArray
    required: FloatArray  # d_j > 0
    value: FloatArray  # v_j
    labels: list[str]
    capacity: FloatArray
    gpu_price: FloatArray  # p_k, finite wherever a candidate can run
    gpu_names: list[str]


@dataclass
class Choice:
    status: Status
    allocation: FloatArray  # (c, K)
    met: NDArray[np.bool_]
    value: float
    mip_gap: float | None
    groups: int
    solution: Solution | None = None  # the MILP whose answer was taken


@dataclass(frozen=True)
class Grouping:
    group: IntArray  # group per candidate
    rank: IntArray  # position by demand within its group (0 = smallest)
    first: IntArray  # one member per group
    count: FloatArray  # n_g


def group_candidates(candidates: Candidates, merge: bool) -> Grouping:
    classes = job_classes(candidates.throughput, candidates.scale, merge)
    low, _ = interval_ids(candidates.throughput, candidates.required)
    _, value_code = np.unique(candidates.value, return_inverse=True)
    group = refine(refine(classes, low), value_code.reshape(-1).astype(np.int64))
    order = np.lexsort((candidates.required, group))
    _, first, count = np.unique(group, return_index=True, return_counts=True)
    starts = np.searchsorted(group[order], np.arange(first.size))
    rank = np.empty(group.size, dtype=np.int64)
    rank[order] = np.arange(group.size) - starts[group[order]]
    return Grouping(group, rank, first, count.astype(float))


def choose(candidates: Candidates, counting: bool, ctx: SolveContext) -> Choice:
    """Phase 1 then phase 2; the status is the weaker of the two."""
    grouping = group_candidates(candidates, ctx.options.merge_identical)
    model, y, met = _build(candidates, grouping)
    group_value = candidates.value[grouping.first]
    model.set_objective({met: group_value}, Sense.MAXIMIZE)
    first = ctx.solve(SolveRequest(model, mip_gap=VALUE_GAP))
    size = grouping.first.size
    if not first.status.has_solution or first.objective is None:
        none = np.zeros(len(candidates.labels), bool)
        return Choice(first.status, np.zeros_like(candidates.throughput), none, 0.0, None, size)
    best = float(first.objective)
    slack = 0.5 if counting else VALUE_GAP * max(best, 1.0)
    model.add_constraints(
        "value", {met: group_value[None, :]}, lower=best - slack, coords=(("total", ["met"]),)
    )
    # Prices in units of the dearest one (see `demand.build`).
    price = candidates.gpu_price / max(float(np.max(candidates.gpu_price, initial=0.0)), 1e-300)
    cost = price[y.gpu] * candidates.scale[grouping.first][y.group]
    model.set_objective({y.block: cost}, Sense.MINIMIZE)
    second = ctx.solve(SolveRequest(model, mip_gap=COST_GAP))
    chosen = second if second.status.has_solution else first
    status = first.status if second.status is Status.OPTIMAL else Status.FEASIBLE
    met_count = np.rint(chosen.value(met))
    flags = grouping.rank < met_count[grouping.group]
    allocation = _split(candidates, grouping, y.dense(chosen.value(y.block)), flags)
    gaps = [g for g in (first.mip_gap, second.mip_gap) if g is not None]
    value = float(candidates.value[flags].sum())
    gap = max(gaps) if gaps else None
    return Choice(status, allocation, flags, value, gap, size, chosen)


def _build(candidates: Candidates, grouping: Grouping) -> tuple[Model, Allocation, Block]:
    first, count, group, rank = grouping.first, grouping.count, grouping.group, grouping.rank
    size = first.size
    labels = [candidates.labels[j] for j in first]
    t_rep = candidates.throughput[first]
    model = Model("slo_subset")
    y = add_allocation(model, t_rep > 0, labels, candidates.gpu_names)
    met = model.add_variables(
        "met", size, lower=0.0, upper=count, integer=True, coords=(("job", labels),)
    )
    # Piece i of D_g: T·Y − d_i q ≥ D_g(i) − i·d_i, scaled by 1/d_i; D_g(i) = demands below i.
    d = candidates.required
    below = np.bincount(group, weights=d, minlength=size)[group] - _sum_from(group, rank, d)
    pick = sp.csr_matrix((np.ones(group.size), (np.arange(group.size), group)), (group.size, size))
    per_y = y.per_group(t_rep[y.group, y.gpu])
    model.add_constraints(
        "slo",
        {y.block: sp.diags(1.0 / d) @ pick @ per_y, met: -pick},
        lower=below / d - rank,
        coords=(("job", candidates.labels),),
    )
    model.add_constraints(
        "time",
        {y.block: y.per_group(np.ones(y.block.size)), met: -sp.identity(size, format="csr")},
        upper=0.0,
        coords=(("job", labels),),
    )
    model.add_constraints(
        "capacity",
        {y.block: y.per_type(candidates.scale[first][y.group])},
        upper=candidates.capacity,
        coords=(("gpu", candidates.gpu_names),),
    )
    return model, y, met


def _sum_from(group: IntArray, rank: IntArray, values: FloatArray) -> FloatArray:
    """Per job, the sum of its group's values at its rank or above (demands ≥ its own)."""
    order = np.lexsort((-rank, group))
    running = np.cumsum(values[order])
    starts = np.searchsorted(group[order], group[order])
    base = np.where(starts > 0, running[np.maximum(starts - 1, 0)], 0.0)
    out = np.empty_like(values)
    out[order] = running - base
    return out


def _split(
    candidates: Candidates, grouping: Grouping, totals: FloatArray, flags: NDArray[np.bool_]
) -> FloatArray:
    """Each group's time split exactly among the members whose SLOs are met."""
    allocation = np.zeros_like(candidates.throughput)
    if flags.any():
        met = np.flatnonzero(flags)
        t_rep = candidates.throughput[grouping.first]
        split = split_groups(totals, t_rep, candidates.required[met], grouping.group[met])
        allocation[met] = split
    return allocation
