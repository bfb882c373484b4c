"""From a solved share LP (group space) back to jobs: allocation, throughput, pairs, repair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from apportion.formulations.allocation import capacity_scale, repair_size, time_fix
from apportion.formulations.fairness.share_lp import ShareBlocks, ShareStructure, pair_terms
from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray
from apportion.solver.backends import Solution


@dataclass(frozen=True)
class JobAnswer:
    """Per job (original order): X alone, throughput incl. pairs, time shared, GPUs used."""

    allocation: FloatArray  # (jobs, types), time alone
    effective_throughput: FloatArray
    shared_time: FloatArray
    gpu_used: FloatArray  # (types,)
    group_value: FloatArray  # v_g after the repair (normalized throughput per group member)
    pair_allocations: list[dict[str, Any]]
    repair: float  # largest relative repair applied to make the answer exactly feasible
    shortfall: float = 0.0  # largest relative shortfall of a group below its floor


def job_answer(
    problem: ClusterArrays,
    jobs: IntArray,
    s: ShareStructure,
    blocks: ShareBlocks,
    solution: Solution,
    measured: FloatArray,
    floor: FloatArray | None = None,
) -> JobAnswer:
    """Map group columns to jobs after a feasibility repair; `measured` is T for reporting.
    `floor` is what each group's v must reach (its level's target): a group a solver's
    tolerance left below it gets the missing time (see `lift`)."""
    columns = solution.x[: blocks.value.shape[1]]
    time_m, capacity_m = resource_matrices(s, blocks)
    columns, repair = repair_columns(columns, time_m, capacity_m, s, blocks)
    shortfall = 0.0
    if floor is not None:
        columns = lift(columns, floor, time_m, capacity_m, s, blocks)
        short = (floor - blocks.value @ columns) / np.maximum(floor, 1e-300)
        shortfall = float(np.max(short, initial=0.0))
    nx = blocks.x.block.size
    x_dense = blocks.x.dense(columns[:nx])
    allocation = np.zeros((problem.num_jobs, problem.num_types))
    allocation[jobs] = x_dense[s.groups.inverse]
    # Each job's own throughputs: an agnostic policy merges jobs whose measured ones differ.
    eff = np.zeros(problem.num_jobs)
    eff[jobs] = np.einsum("jk,jk->j", measured[jobs], allocation[jobs])
    shared = np.zeros(problem.num_jobs)
    if columns.size > nx:
        value_y, time_y, _ = pair_terms(s)
        paired = (value_y @ columns[nx:]) / s.gain  # pair throughputs are measured already
        eff[jobs] += paired[s.groups.inverse]
        shared[jobs] = (time_y @ columns[nx:])[s.groups.inverse]
    return JobAnswer(
        allocation,
        eff,
        shared,
        capacity_m @ columns,
        blocks.value @ columns,
        pair_allocations(problem, jobs, s, columns[nx:]),
        repair,
        shortfall,
    )


def exact_values(
    s: ShareStructure,
    blocks: ShareBlocks,
    solution: Solution,
    floor: FloatArray,
    resources: tuple[sp.csr_matrix, sp.csr_matrix],
    donors: BoolArray,
) -> FloatArray:
    """v_g at the solution made exactly feasible (`repair_columns`) and lifted to `floor`
    (`lift`, taking what that needs from `donors` first): a point that meets every row in exact
    arithmetic, whatever the solver's tolerance, so floors taken from it can all be held at
    once."""
    time_m, capacity_m = resources
    columns, _ = repair_columns(solution.x[: blocks.value.shape[1]], time_m, capacity_m, s, blocks)
    columns = lift(columns, floor, time_m, capacity_m, s, blocks, donors)
    values: FloatArray = blocks.value @ columns
    return values


def resource_matrices(s: ShareStructure, b: ShareBlocks) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(time, capacity) rows over the value columns (X, then Y)."""
    return b.resources


def repair_columns(
    columns: FloatArray,
    time_m: sp.csr_matrix,
    capacity_m: sp.csr_matrix,
    s: ShareStructure,
    b: ShareBlocks,
) -> tuple[FloatArray, float]:
    """`allocation.repair_allocation` in the share LPs' column form (a pair column spends two
    jobs' time): clip round-off and scale down over-full jobs and types, so the answer is
    feasible by construction; returns the largest relative repair (above round-off = not
    trustworthy)."""
    v = np.clip(columns, 0.0, None)
    v[v < 1e-10] = 0.0
    fix = time_fix(time_m @ v)
    nx = b.x.block.size
    v[:nx] *= fix[b.x.group]
    if s.pairs is not None and s.pair_columns is not None:
        c = s.pair_columns[0]
        v[nx:] *= np.minimum(fix[s.pairs.g[c]], fix[s.pairs.h[c]])
    scale = capacity_scale(capacity_m @ v, s.capacity)
    gpu = np.concatenate([b.x.gpu, s.pair_columns[1] if s.pair_columns else np.zeros(0, int)])
    v *= scale[gpu]
    return v, repair_size(fix, scale)


def lift(
    columns: FloatArray,
    floor: FloatArray,
    time_m: sp.csr_matrix,
    capacity_m: sp.csr_matrix,
    s: ShareStructure,
    b: ShareBlocks,
    donors: BoolArray | None = None,
) -> FloatArray:
    """Give each group left below its floor the missing time on its fastest column alone, then
    scale back types made over-full: only the columns of `donors` (groups that may give up a
    little, e.g. those a later level raises again) where they hold enough of the type, every
    column otherwise. A solver may leave a requirement below its feasibility tolerance at 0 (a
    job needing 1e-10 of its time next to one needing all of it); the time it needs is then of
    that order too, so the others lose no more than round-off. What is left short after this
    shows in the objective, which the caller certifies."""
    v = columns.copy()
    short = floor - b.value @ v
    needs = short > 1e-9 * np.maximum(floor, 0.0)
    if not needs.any():
        return v
    nx = b.x.block.size
    speed = s.gain[b.x.group] * s.throughput[b.x.group, b.x.gpu]
    order = np.lexsort((-speed, b.x.group))
    first = order[np.r_[True, np.diff(b.x.group[order]) != 0]]  # fastest column per group
    best = np.full(s.size, -1)
    best[b.x.group[first]] = first
    lifted = np.flatnonzero(needs & (best >= 0))
    v[best[lifted]] += short[lifted] / speed[best[lifted]]
    room = np.minimum(1.0, 1.0 / np.maximum(time_m @ v, 1e-300))
    v[:nx] *= room[b.x.group]
    gpu = np.concatenate([b.x.gpu, s.pair_columns[1] if s.pair_columns else np.zeros(0, int)])
    used = capacity_m @ v
    scale = np.where(used > s.capacity, s.capacity / np.maximum(used, 1e-300), 1.0)
    if donors is not None:
        giving = _column_groups_all(s, b, donors & ~needs)
        over = np.maximum(used - s.capacity, 0.0)
        given = capacity_m @ np.where(giving, v, 0.0)
        enough = (over > 0) & (given >= over)
        part = 1.0 - np.divide(over, given, out=np.zeros_like(over), where=enough)
        v = np.where(giving, v * part[gpu], v)
        scale = np.where(enough, 1.0, scale)
    v *= scale[gpu]
    return v


def _column_groups_all(s: ShareStructure, b: ShareBlocks, groups: BoolArray) -> BoolArray:
    """Per value column (X, then Y): whether every group it serves is in `groups`."""
    if s.pairs is None or s.pair_columns is None:
        return groups[b.x.group]
    c = s.pair_columns[0]
    both: BoolArray = groups[s.pairs.g[c]] & groups[s.pairs.h[c]]
    return np.concatenate([groups[b.x.group], both])


def pair_allocations(
    problem: ClusterArrays, jobs: IntArray, s: ShareStructure, y: FloatArray
) -> list[dict[str, Any]]:
    """The pair columns in use, as job pairs {a, b, allocation: {gpu: time}}.

    A merged class's time is realized sparsely with the same per-job totals: between groups
    g ≠ h by the north-west-corner rule over the members (at most n_g + n_h − 1 pairs), within a
    group by a cycle (each member with its two neighbours for half its time each)."""
    if s.pairs is None or s.pair_columns is None or not y.size:
        return []
    members = _members(jobs, s)
    out: dict[tuple[int, int], dict[str, float]] = {}
    c_idx, k_idx = s.pair_columns
    for col in np.flatnonzero(y > 0):
        c, k = int(c_idx[col]), int(k_idx[col])
        g, h = int(s.pairs.g[c]), int(s.pairs.h[c])
        for a, b, amount in _realize(members[g], members[h], g == h, float(y[col])):
            key = (a, b) if a < b else (b, a)
            entry = out.setdefault(key, {})
            name = problem.gpu_names[k]
            entry[name] = entry.get(name, 0.0) + amount
    return [
        {"a": problem.job_ids[a], "b": problem.job_ids[b], "allocation": alloc}
        for (a, b), alloc in sorted(out.items())
    ]


def _members(jobs: IntArray, s: ShareStructure) -> list[IntArray]:
    order = np.argsort(s.groups.inverse, kind="stable")
    bounds = np.cumsum(np.bincount(s.groups.inverse, minlength=s.size))[:-1]
    return np.split(jobs[order], bounds)


def _realize(ga: IntArray, gb: IntArray, same: bool, y: float) -> list[tuple[int, int, float]]:
    n, m = ga.size, gb.size
    if same:
        if n == 2:
            return [(int(ga[0]), int(ga[1]), y)]
        half = (n - 1) * y / 2  # each member's (n − 1) y spread over its two cycle neighbours
        return [(int(ga[i]), int(ga[(i + 1) % n]), half) for i in range(n)]
    # Member i of g covers [i m, (i+1) m) and member j of h covers [j n, (j+1) n) of n·m units.
    cuts = np.union1d(np.arange(n + 1) * m, np.arange(m + 1) * n)
    start, length = cuts[:-1], np.diff(cuts)
    return [
        (int(ga[p // m]), int(gb[p // n]), float(q) * y)
        for p, q in zip(start.tolist(), length.tolist(), strict=True)
    ]
