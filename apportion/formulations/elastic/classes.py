"""Identical jobs merged into classes (FORMULATIONS §9c).

Jobs with the same candidates (GPU type, GPUs, nodes, value in the objective, current or not),
weight and remaining work are interchangeable: any answer can give the choices of a class to its
members in any order, and the objective is a sum over jobs. So one integer y_gc ∈ [0, n_g] per
class and candidate (how many members run in it) with Σ_c y_gc ≤ n_g has the optimum of the
per-job model. Sia's 5,120-job scale workload has a handful of classes when no job has run yet.
Pinned jobs are never merged: they keep their configuration and leave the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from apportion.formulations.elastic.candidates import ElasticJobs
from apportion.solver.arraytypes import FloatArray, IntArray


@dataclass(frozen=True)
class Classes:
    """`members[g]` are the jobs of class g (ascending); class g's candidates are those of its
    first member, `column[start[g]:start[g + 1]]` (indices into the jobs' candidates)."""

    members: list[IntArray]
    count: FloatArray  # n_g
    column: IntArray  # candidate indices, class by class
    owner: IntArray  # class of each column
    start: IntArray

    @property
    def size(self) -> int:
        return len(self.members)

    def representative(self) -> IntArray:
        return np.array([m[0] for m in self.members], dtype=np.int64)


def merge(jobs: ElasticJobs, value: FloatArray, active: NDArray[np.bool_], merge: bool) -> Classes:
    """Classes of the `active` jobs, keyed by their candidates' `value` in the objective."""
    c = jobs.candidates
    jobs_in = np.flatnonzero(active)
    if merge and jobs_in.size:
        inverse = _identical(jobs, value, jobs_in)
    else:
        inverse = np.arange(jobs_in.size)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    members = np.split(jobs_in[order], bounds) if jobs_in.size else []
    members.sort(key=lambda g: int(g[0]))
    firsts = np.array([g[0] for g in members], dtype=np.int64)
    sizes = (c.start[firsts + 1] - c.start[firsts]).astype(np.int64)
    column = _ranges(c.start[firsts], sizes)
    return Classes(
        members=members,
        count=np.array([g.size for g in members], dtype=float),
        column=column,
        owner=np.repeat(np.arange(len(members)), sizes).astype(np.int64),
        start=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
    )


def _identical(jobs: ElasticJobs, value: FloatArray, jobs_in: IntArray) -> IntArray:
    """A class id per job of `jobs_in`: equal rows of (candidates padded to one width, weight,
    remaining work)."""
    c = jobs.candidates
    sizes = (c.start[jobs_in + 1] - c.start[jobs_in]).astype(np.int64)
    columns = _ranges(c.start[jobs_in], sizes)
    row = np.repeat(np.arange(jobs_in.size), sizes)
    position = columns - np.repeat(c.start[jobs_in], sizes)
    fields = np.column_stack(
        [c.gpu[columns], c.gpus[columns], c.nodes[columns], c.current[columns], value[columns]]
    )
    padded = np.full((jobs_in.size, int(sizes.max(initial=0)), fields.shape[1]), -1.0)
    padded[row, position] = fields
    key = np.column_stack(
        [
            padded.reshape(jobs_in.size, -1),
            jobs.weight[jobs_in],
            np.nan_to_num(jobs.remaining[jobs_in], nan=-1.0),
        ]
    )
    _, inverse = np.unique(key, axis=0, return_inverse=True)
    out: IntArray = inverse.reshape(-1).astype(np.int64)
    return out


def _ranges(starts: IntArray, sizes: IntArray) -> IntArray:
    """The concatenation of arange(s, s + n) for each start s and size n."""
    if sizes.size == 0:
        return np.zeros(0, np.int64)
    offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    out: IntArray = np.repeat(starts, sizes) + offsets
    return out
