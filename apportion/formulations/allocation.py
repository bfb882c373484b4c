"""The allocation matrix X shared by the Gavel family: variables, base constraints, job merging.

Base constraints (FORMULATIONS §0), for groups g of n_g identical jobs:
    Σ_k X_gk ≤ 1                 ∀g   (a job runs at most all the time)
    Σ_g n_g s_g X_gk ≤ N_k        ∀k   (no type is over-subscribed)
    X ≥ 0, X_gk absent where job g cannot run on k (T = 0 or s_g > N_k)

Identical jobs can be merged without changing the optimum of a concave objective over a convex
set: averaging an optimal X over a group's members is feasible and no worse (symmetry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from apportion.solver.arraytypes import FloatArray, IntArray
from apportion.solver.model import Block, Model, Take


@dataclass(frozen=True)
class JobGroups:
    """Jobs merged by identical data: `members[g]` are the jobs of group g."""

    representative: IntArray  # one job index per group
    inverse: IntArray  # group index per job (over the jobs that were grouped)
    count: FloatArray  # n_g

    @property
    def size(self) -> int:
        return int(self.representative.size)

    @classmethod
    def identity(cls, jobs: IntArray) -> JobGroups:
        return cls(jobs, np.arange(jobs.size), np.ones(jobs.size))

    @classmethod
    def by_rows(cls, jobs: IntArray, key: FloatArray) -> JobGroups:
        """Group `jobs` whose rows in `key` (len(jobs) × d) are identical."""
        if jobs.size == 0:
            return cls.identity(jobs)
        # Rows as opaque byte strings: a 1-D unique is several times faster than axis=0.
        rows = np.ascontiguousarray(key, dtype=np.float64)
        flat = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first, inverse, count = np.unique(
            flat, return_index=True, return_inverse=True, return_counts=True
        )
        return cls(jobs[first], inverse.reshape(-1), count.astype(float))


@dataclass(frozen=True)
class Allocation:
    """The variable block X over (group, type) pairs where the group can run, in (group, type)
    order."""

    block: Block
    group: IntArray  # group index of each variable (ascending)
    gpu: IntArray  # type index of each variable
    num_groups: int
    num_types: int

    def per_group(self, coefficients: FloatArray) -> sp.csr_matrix:
        """Rows g: Σ_k coefficients[var] X_var over the group's variables (groups × vars)."""
        # The variables are in group order: row g holds a run of them, so the matrix is built
        # from its row pointers (several times cheaper than from coordinates on small models).
        n = self.block.size
        index = _index_type(max(n, self.num_groups))
        pointers = _pointers(self.group, self.num_groups, index)
        return sp.csr_matrix(
            (np.array(coefficients), np.arange(n, dtype=index), pointers),
            shape=(self.num_groups, n),
        )

    def per_type(self, coefficients: FloatArray) -> sp.csr_matrix:
        """Rows k: Σ_g coefficients[var] X_var over the type's variables (types × vars)."""
        n = self.block.size
        index = _index_type(max(n, self.num_types))
        order = np.argsort(self.gpu, kind="stable")
        return sp.csr_matrix(
            (coefficients[order], order.astype(index), _pointers(self.gpu, self.num_types, index)),
            shape=(self.num_types, n),
        )

    def dense(self, values: FloatArray) -> FloatArray:
        """The variable values as a (groups × types) matrix, zeros where absent."""
        out = np.zeros((self.num_groups, self.num_types))
        out[self.group, self.gpu] = values
        return out


def _index_type(size: int) -> type[np.signedinteger[Any]]:
    """The index type scipy would choose for `size` entries: given it, scipy need not scan the
    indices to choose."""
    return np.int32 if size <= np.iinfo(np.int32).max else np.int64


def _pointers(rows: IntArray, num_rows: int, index: type[np.signedinteger[Any]]) -> IntArray:
    """CSR row pointers of entries whose rows are `rows`, taken in row order."""
    pointers = np.zeros(num_rows + 1, dtype=index)
    np.cumsum(np.bincount(rows, minlength=num_rows), out=pointers[1:])
    return pointers


def add_allocation(
    model: Model, eligible: NDArray[np.bool_], group_labels: list[str], gpu_names: list[str]
) -> Allocation:
    """X_gk ≥ 0 for every eligible (group, type) pair.

    X ≤ 1 is implied by the time row Σ_k X_gk ≤ 1 and left out: an interior-point backend would
    pay a cone row for every redundant bound.
    """
    group, gpu = np.nonzero(eligible)
    block = model.add_variables(
        "x",
        group.size,
        lower=0.0,
        coords=(("job", Take(group_labels, group)), ("gpu", Take(gpu_names, gpu))),
    )
    return Allocation(block, group, gpu, eligible.shape[0], eligible.shape[1])


def add_base_constraints(
    model: Model,
    x: Allocation,
    gpus_per_group: FloatArray,
    capacity: FloatArray,
    group_labels: list[str],
    gpu_names: list[str],
) -> None:
    """Σ_k X_gk ≤ 1 per group and Σ_g n_g s_g X_gk ≤ N_k per type."""
    model.add_constraints(
        "time",
        {x.block: x.per_group(np.ones(x.block.size))},
        upper=1.0,
        coords=(("job", group_labels),),
    )
    model.add_constraints(
        "capacity",
        {x.block: x.per_type(gpus_per_group[x.group])},
        upper=capacity,
        coords=(("gpu", gpu_names),),
    )


def repair_allocation(
    allocation: FloatArray, gpus: FloatArray, capacity: FloatArray
) -> tuple[FloatArray, float]:
    """Make X exactly feasible and return it with the largest relative repair applied.

    Interior-point answers can hold -1e-12 entries or rows summing to 1 + 1e-9; a scheduler acting
    on the allocation must never see them. Rows over 1 and over-subscribed types are scaled down,
    so the result is feasible by construction; a repair above round-off means the solve was not
    trustworthy and the caller says so in the status.
    """
    x = np.clip(allocation, 0.0, 1.0)
    # Interior points leave crumbs (1e-12 where the answer is 0); a crumb is small next to the
    # job's own time, not in absolute terms: a job may rightly need 1e-13 of its time.
    x[x < 1e-9 * x.max(axis=1, keepdims=True)] = 0.0
    fix = time_fix(x.sum(axis=1))
    x *= fix[:, None]
    scale = capacity_scale(gpus @ x, capacity)
    x *= scale[None, :]
    return x, repair_size(fix, scale)


def time_fix(time_used: FloatArray) -> FloatArray:
    """The factor each job's time is scaled by so that it spends at most all of it (1 for a job
    within its time). The first half of every feasibility repair (`repair_allocation`, and the
    share LPs' column form in `fairness.share_result`)."""
    fixed: FloatArray = np.minimum(1.0, 1.0 / np.maximum(time_used, 1e-300))
    return fixed


def capacity_scale(used: FloatArray, capacity: FloatArray) -> FloatArray:
    """The factor each GPU type's use is scaled by so that it fits the type's GPUs: the second
    half of every feasibility repair."""
    scale: FloatArray = np.where(used > capacity, capacity / np.maximum(used, 1e-300), 1.0)
    return scale


def repair_size(fix: FloatArray, scale: FloatArray) -> float:
    """The largest relative change a repair made: above round-off, the solve it repaired was
    not trustworthy and the caller says so in the status."""
    return max(float(np.max(1.0 - fix, initial=0.0)), float(np.max(1.0 - scale, initial=0.0)))


def normalized_share(
    throughput: FloatArray,
    allocation: FloatArray,
    scale: FloatArray,
    weight: FloatArray,
    equal_share: FloatArray,
) -> FloatArray:
    """u_j = s_j · Σ_k T_jk X_jk / (w_j · prop_j); 0 for jobs with prop_j = 0."""
    eff = np.einsum("jk,jk->j", throughput, allocation)
    denom = weight * equal_share
    share: FloatArray = np.divide(scale * eff, denom, out=np.zeros_like(eff), where=denom > 0)
    return share
