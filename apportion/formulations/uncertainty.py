"""Throughputs known within a box: T'_jk ∈ [T_jk (1 − δ_jk), T_jk (1 + δ_jk)] (FORMULATIONS §1f),
shared by the robust policies of every family.

`uncertainty_matrix` reads δ from the snapshot (per job and type, the policy's scalar default
elsewhere); `worst_shares` is the exact worst case, over the box, of each job's realized share
under a given allocation.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arrays import ClusterArrays
from apportion.solver.arraytypes import FloatArray
from apportion.solver.snapshot import Snapshot
from apportion.solver.snapshot.columns import JobColumns


def uncertainty_matrix(
    snapshot: Snapshot, problem: ClusterArrays, default: float
) -> tuple[FloatArray, bool]:
    """(δ, whether any job gave its own): δ_jk from `throughput_uncertainty`, else `default`."""
    delta = np.full(problem.throughput.shape, float(default))
    jobs = snapshot.jobs
    # Jobs checked as columns carry plain fields only: none of them gave a bound of its own.
    if isinstance(jobs, JobColumns):
        return delta, False
    column = {name: k for k, name in enumerate(problem.gpu_names)}
    own = False
    for j, job in enumerate(jobs):
        for gpu, value in (job.throughput_uncertainty or {}).items():
            delta[j, column[gpu]] = value
            own = True
    return delta, own


def reference_throughput(throughput: FloatArray, capacity: FloatArray) -> FloatArray:
    """prop_j = Σ_k T_jk N_k / C: each job's throughput on an equal share of every type."""
    prop: FloatArray = throughput @ capacity / capacity.sum()
    return prop


def worst_shares(
    allocation: FloatArray,
    low: FloatArray,
    high: FloatArray,
    capacity: FloatArray,
) -> FloatArray:
    """min over T' ∈ [low, high] of Σ_k T'_jk x_jk / prop_j(T'), per job (0 where prop can be 0).

    A ratio a·T' / b·T' of linear functions (a = x_j ≥ 0, b = N / C > 0) is monotone in each
    T'_k on its own, decreasing exactly where a_k / b_k < f (the ratio's value): so a minimizer
    puts T'_k at its low end where a_k / b_k is above the minimum f* and at its high end where
    below. Sorted by a_k / b_k, the minimizer is one of the K + 1 splits "the first i types
    low, the rest high"; all of them are evaluated at once."""
    b = capacity / capacity.sum()
    order = np.argsort(-(allocation / b), axis=1, kind="stable")
    a_sorted = np.take_along_axis(allocation, order, axis=1)
    lo, hi = (np.take_along_axis(m, order, axis=1) for m in (low, high))
    b_sorted = b[order]
    zero = np.zeros((allocation.shape[0], 1))
    # Split i: types [0, i) at their low end, [i, K) at their high end.
    num_low = np.hstack([zero, np.cumsum(a_sorted * lo, axis=1)])
    den_low = np.hstack([zero, np.cumsum(b_sorted * lo, axis=1)])
    num_high = (a_sorted * hi).sum(axis=1, keepdims=True) - np.hstack(
        [zero, np.cumsum(a_sorted * hi, axis=1)]
    )
    den_high = (b_sorted * hi).sum(axis=1, keepdims=True) - np.hstack(
        [zero, np.cumsum(b_sorted * hi, axis=1)]
    )
    num, den = num_low + num_high, den_low + den_high
    ratio = np.divide(num, den, out=np.full_like(num, np.inf), where=den > 0)
    worst: FloatArray = ratio.min(axis=1)
    return np.where(np.isfinite(worst), worst, 0.0)
