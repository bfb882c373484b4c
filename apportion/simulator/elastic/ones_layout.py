"""Where ONES lays out a schedule: each job one contiguous block of GPUs, moving as few
running jobs as it can (`simulator.elastic.ones`; ONES's `ONESScheduler._reorder`)."""

from __future__ import annotations

import numpy as np

from apportion.solver.arraytypes import IntArray

IDLE = -1


def reorder(alloc: dict[int, int], src: IntArray, segments: list[tuple[int, int]]) -> IntArray:
    """ONES's `_reorder`: jobs (in the allocation's order) and idle GPUs laid out left to
    right, each job one contiguous block (here within one GPU type), the fewest GPUs taken
    from another job of the current schedule; f[i, k] is the least such count over the
    first i GPUs holding k jobs, ties to an idle GPU, then to the first job in order."""
    ids = np.array(list(alloc), dtype=np.int64)
    size = np.array(list(alloc.values()), dtype=np.int64)
    n, m = src.size, ids.size
    segment_end = _segment_end(segments, n)
    other = np.cumsum((src[None, :] >= 0) & (src[None, :] != ids[:, None]), axis=1)
    other = np.hstack([np.zeros((m, 1), np.int64), other])  # other[j, i]: in GPUs < i
    f = np.full((n + 1, m + 1), np.inf)
    f[0, 0] = 0.0
    used = np.zeros((n + 1, m + 1, m), dtype=bool)
    parent = np.full((n + 1, m + 1), -1, np.int64)  # -1: an idle GPU; else the job
    top, jobs = 0, np.arange(m)
    for i in range(1, n + 1):
        reach = min(top + 2, m + 1)
        f[i, :reach], used[i, :reach] = f[i - 1, :reach], used[i - 1, :reach]
        start = i - size
        fits = (start >= 0) & (segment_end[np.maximum(start, 0)] >= i)
        start = np.maximum(start, 0)
        ks = np.arange(1, reach)
        before = f[start[None, :], ks[:, None] - 1]
        taken = used[start[None, :], ks[:, None] - 1, jobs[None, :]]
        y = before + (other[jobs, i] - other[jobs, start])[None, :]
        y = np.where(fits[None, :] & ~taken & np.isfinite(before), y, np.inf)
        best = np.argmin(y, axis=1) if m else np.zeros(0, np.int64)
        cost = y[np.arange(ks.size), best]
        better = cost < f[i, ks]
        for kk, j in zip(ks[better].tolist(), best[better].tolist(), strict=True):
            f[i, kk], parent[i, kk] = cost[kk - 1], j
            used[i, kk] = used[start[j], kk - 1]
            used[i, kk, j] = True
        finite = np.flatnonzero(np.isfinite(f[i, :reach]))
        top = max(top, int(finite[-1]) if finite.size else 0)
    if not np.isfinite(f[n, m]):
        return pack(alloc, src, segments)
    out = np.full(n, IDLE, np.int64)
    end, k = n, m
    while end > 0:
        j = int(parent[end, k])
        if j < 0:
            end -= 1
        else:
            out[end - size[j] : end] = ids[j]
            end, k = end - int(size[j]), k - 1
    return out


def pack(alloc: dict[int, int], src: IntArray, segments: list[tuple[int, int]]) -> IntArray:
    """Where `reorder` finds no layout within the GPU types: a job that keeps or shrinks
    its block stays on its first GPUs; then the others, largest first, each within one type
    where it takes the fewest other jobs' GPUs, then keeps most of its own, then comes
    first."""
    size, out = src.size, np.full(src.size, IDLE, np.int64)
    segment_end = _segment_end(segments, size)
    rest = []
    for j, n in alloc.items():
        held = np.flatnonzero(src == j)
        if held.size and n <= held.size and held[-1] - held[0] + 1 == held.size:
            out[held[:n]] = j
        else:
            rest.append(j)
    for j in sorted(rest, key=lambda j: -alloc[j]):
        n = alloc[j]
        starts = np.arange(size - n + 1)
        busy, other, own = (
            np.r_[0, np.cumsum(m)] for m in (out != IDLE, (src >= 0) & (src != j), src == j)
        )
        fits = (busy[starts + n] == busy[starts]) & (segment_end[starts] >= starts + n)
        if fits.any():
            s = starts[fits]
            cost = (other[s + n] - other[s]) * (size + 1) ** 2
            cost += (n - own[s + n] + own[s]) * (size + 1) + s
            first = int(s[np.argmin(cost)])
            out[first : first + n] = j
        else:  # fragmented: the idle GPUs of the type with most of them
            spans = [np.flatnonzero(out[lo:hi] == IDLE) + lo for lo, hi in segments]
            out[max(spans, key=len)[:n]] = j
    return out


def _segment_end(segments: list[tuple[int, int]], size: int) -> IntArray:
    """For each GPU (and one past the last), where its run of one GPU type ends."""
    ends = [np.full(hi - lo, hi) for lo, hi in segments]
    return np.concatenate([*ends, [size]]).astype(np.int64)
