"""Groups of jobs that share one aggregate LP variable per GPU type, and the exact split back.

Jobs of one *class* (same usable throughput row T and scale factor) differ only in their demand
d_j on effective throughput. Job j's feasible time fractions are

    P(d_j) = {x ≥ 0 : Σ_k x_k ≤ 1, T·x ≥ d_j}.

The shape (normal fan) of P(d) only changes when d crosses 0 or one of the class's throughputs
T_(1) ≤ … ≤ T_(K): inside one closed interval of that list the polytopes are normally equivalent,
and normally equivalent polytopes add facet by facet:

    Σ_j P(d_j) = {y ≥ 0 : Σ_k y_k ≤ n, T·y ≥ Σ_j d_j}      (all d_j in one interval).

So a *group* (one class, one interval) is exactly described by an aggregate y and two rows, and any
aggregate in that set splits back into member allocations (`split_group`). Groups whose demands
straddle an interval end make the aggregate rows a relaxation only; `refine` splits them.
"""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import BoolArray, FloatArray, IntArray

# Demands this close (relative to the class's fastest throughput) to an interval end may sit on
# either side: the split is exact on the closed interval, and LP round-off is far smaller.
BOUNDARY_TOLERANCE = 1e-9


def job_classes(throughput: FloatArray, scale: FloatArray, merge: bool) -> IntArray:
    """Class id per job: identical usable throughput rows and scale factors share one."""
    m = throughput.shape[0]
    if not merge or m == 0:
        return np.arange(m)
    key = np.ascontiguousarray(np.column_stack([throughput, scale]), dtype=np.float64)
    flat = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).ravel()
    _, inverse = np.unique(flat, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def interval_ids(throughput: FloatArray, demand: FloatArray) -> tuple[IntArray, IntArray]:
    """(lowest, highest) interval index each demand may belong to.

    Interval 0 is d ≤ 0, interval i ≥ 1 is (i-th smallest positive throughput end, next]; a demand
    within the tolerance of an end may belong to both neighbours.
    """
    tol = BOUNDARY_TOLERANCE * np.maximum(throughput.max(axis=1, initial=0.0), 1e-300)
    ends = np.where(throughput > 0, throughput, np.inf)
    low = (demand - tol > 0).astype(np.int64) + (ends < (demand - tol)[:, None]).sum(axis=1)
    high = (demand + tol > 0).astype(np.int64) + (ends < (demand + tol)[:, None]).sum(axis=1)
    return low, high


def inconsistent_groups(group: IntArray, low: IntArray, high: IntArray, size: int) -> BoolArray:
    """Groups with no interval common to all members (their aggregate rows are a relaxation)."""
    top = np.full(size, -1, dtype=np.int64)
    bottom = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
    np.maximum.at(top, group, low)
    np.minimum.at(bottom, group, high)
    return top > bottom


def refine(group: IntArray, key: IntArray, which: BoolArray | None = None) -> IntArray:
    """Split groups by `key` (only the groups flagged in `which`, if given); ids renumbered."""
    key = key if which is None else np.where(which[group], key, -1)
    pairs = np.column_stack([group, key])
    _, inverse = np.unique(pairs, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def split_groups(
    totals: FloatArray,
    throughput: FloatArray,
    demand: FloatArray,
    group: IntArray,
    keep_surplus: bool = False,
) -> FloatArray:
    """Member allocations (jobs × K) from group aggregates (groups × K), all groups at once.

    `throughput` is each group's row T (0 where it cannot run). Exact when every group's aggregate
    lies in Σ_j P(d_j) and its demands share an interval: the aggregate is first scaled down to
    deliver exactly Σ_j d_j, then written as (n − Θ)·P + Θ·Q with P ∈ P(d_min), Q ∈ P(d_max),
    θ_j = (d_j − d_min)/(d_max − d_min) and Θ = Σ_j θ_j; job j gets (1 − θ_j)·P + θ_j·Q, which
    lies in P(d_j) and delivers exactly d_j. P comes from `_time_split`.

    With `keep_surplus`, what the scaling took off is handed back in proportion to each member's
    spare time 1 − Σ_k x_jk: the group's spare time is n_g − (Σ_k of the scaled aggregate), at
    least the surplus's Σ_k, so every member stays within its time and gains throughput.
    """
    size = totals.shape[0]
    need = np.maximum(demand, 0.0)
    count = np.maximum(np.bincount(group, minlength=size), 1).astype(np.float64)  # empty groups
    need_sum = np.bincount(group, weights=need, minlength=size)
    work = np.einsum("gk,gk->g", throughput, totals)
    shrink = np.where((need_sum > 0) & (work > need_sum), need_sum / np.maximum(work, 1e-300), 1.0)
    exact = _split_exact(totals * shrink[:, None], throughput, need, group, count)
    if not keep_surplus:
        return exact
    surplus = totals * (1.0 - shrink)[:, None]
    spare = np.maximum(1.0 - exact.sum(axis=1), 0.0)
    spare_sum = np.bincount(group, weights=spare, minlength=size)
    share = spare / np.maximum(spare_sum, 1e-300)[group]
    out: FloatArray = exact + share[:, None] * surplus[group]
    return out


def _split_exact(
    totals: FloatArray, throughput: FloatArray, need: FloatArray, group: IntArray, count: FloatArray
) -> FloatArray:
    """`split_groups` for aggregates that deliver exactly their members' demands."""
    size = totals.shape[0]
    low = np.full(size, np.inf)
    high = np.zeros(size)
    np.minimum.at(low, group, need)
    np.maximum.at(high, group, need)
    low[np.isinf(low)] = 0.0
    spread = high - low
    flat = spread <= 1e-12 * np.maximum(high, 1e-300)
    theta = np.where(flat[group], 0.0, (need - low[group]) / np.where(flat, 1.0, spread)[group])
    big = np.bincount(group, weights=theta, minlength=size)
    rest = count - big
    part = _time_split(totals, throughput, rest * low, rest, totals.sum(axis=1) - big)
    p = np.where(flat[:, None], totals / count[:, None], part / np.where(flat, 1.0, rest)[:, None])
    q = (totals - part) / np.where(flat, 1.0, big)[:, None]
    return (1.0 - theta)[:, None] * p[group] + theta[:, None] * q[group]


def _time_split(
    total: FloatArray, throughput: FloatArray, work: FloatArray, most: FloatArray, least: FloatArray
) -> FloatArray:
    """Per row, a part 0 ≤ part ≤ total with throughput·part = work and least ≤ Σ part ≤ most.

    For a fixed time S = Σ part, the reachable work runs from filling the slowest types first to
    filling the fastest first; take the smallest S whose fastest fill reaches `work` (but at least
    `least`), then mix the slowest and fastest fills of that S to hit `work` exactly.
    """
    order = np.argsort(throughput, axis=1, kind="stable")
    amount = np.take_along_axis(total, order, axis=1)
    speed = np.take_along_axis(throughput, order, axis=1)
    zero = np.zeros((total.shape[0], 1))
    fast_time = np.hstack([zero, np.cumsum(amount[:, ::-1], axis=1)])
    fast_work = np.hstack([zero, np.cumsum((amount * speed)[:, ::-1], axis=1)])
    time = _interp_rows(work, fast_work, fast_time)
    time = np.minimum(np.maximum(np.maximum(time, least), 0.0), np.minimum(most, fast_time[:, -1]))
    slow = _fill(amount, time)
    fast = _fill(amount[:, ::-1], time)[:, ::-1]
    slow_work = np.einsum("gk,gk->g", speed, slow)
    gain = np.einsum("gk,gk->g", speed, fast) - slow_work
    usable = gain > 1e-15 * np.maximum(slow_work + gain, 1e-300)
    mix = np.clip(np.where(usable, (work - slow_work) / np.where(usable, gain, 1.0), 0.0), 0, 1)
    part = np.empty_like(total)
    np.put_along_axis(part, order, (1.0 - mix)[:, None] * slow + mix[:, None] * fast, axis=1)
    return part


def _interp_rows(x: FloatArray, xp: FloatArray, fp: FloatArray) -> FloatArray:
    """np.interp row by row (xp non-decreasing per row), extrapolating linearly past the end."""
    k = xp.shape[1] - 1
    seg = np.clip((xp < x[:, None]).sum(axis=1), 1, k)
    rows = np.arange(x.size)
    x0, x1 = xp[rows, seg - 1], xp[rows, seg]
    y0, y1 = fp[rows, seg - 1], fp[rows, seg]
    width = x1 - x0
    slope = np.where(width > 0, (y1 - y0) / np.where(width > 0, width, 1.0), 0.0)
    out: FloatArray = y0 + (x - x0) * slope
    return out


def _fill(amount: FloatArray, time: FloatArray) -> FloatArray:
    """Per row, take `time` from `amount` in column order, each entry up to its amount."""
    before = np.cumsum(amount, axis=1) - amount
    out: FloatArray = np.clip(time[:, None] - before, 0.0, amount)
    return out
