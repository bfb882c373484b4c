"""ONES's layout of an allocation: each job one contiguous block, within one GPU type, laid
out by ONES's recurrence (written out plainly here, one GPU and one job at a time), and on a
hand-built case keeping every running job where it is."""

from __future__ import annotations

import math

import numpy as np
import pytest

from apportion.simulator.elastic.ones_layout import IDLE, reorder

A, B, C, D = 0, 1, 2, 3


def _taken(layout: np.ndarray, src: np.ndarray) -> int:
    return int(((layout >= 0) & (src >= 0) & (src != layout)).sum())


def _plain(alloc: dict[int, int], src: list[int]) -> list[int]:
    """f[i][k]: the fewest GPUs taken from other jobs over the first i GPUs with k jobs laid
    out (a job at most once), the next GPU idle or the end of a job's block; ties go to an idle
    GPU, then to the first job in the allocation's order; k runs up to one past the most jobs
    any earlier prefix held."""
    n, m = len(src), len(alloc)
    f = [[math.inf] * (m + 1) for _ in range(n + 1)]
    seq: list[list[list[int | None]]] = [[[] for _ in range(m + 1)] for _ in range(n + 1)]
    f[0][0], most = 0, 0
    for i in range(1, n + 1):
        for k in range(min(most + 2, m + 1)):
            if f[i - 1][k] < f[i][k]:
                f[i][k], seq[i][k] = f[i - 1][k], [*seq[i - 1][k], None]
            for j, size in alloc.items() if k else ():
                s = i - size
                if s < 0 or f[s][k - 1] == math.inf or j in seq[s][k - 1]:
                    continue
                cost = f[s][k - 1] + sum(1 for x in src[s:i] if x >= 0 and x != j)
                if cost < f[i][k]:
                    f[i][k], seq[i][k] = cost, [*seq[s][k - 1], j]
            if k > most and f[i][k] < math.inf:
                most = k
    out: list[int] = []
    for block in seq[n][m]:
        out += [IDLE] if block is None else [block] * alloc[block]
    return out


def test_no_gpu_is_taken_from_another_job_when_none_need_be() -> None:
    src = np.array([A, A, B, IDLE, IDLE, C, C, IDLE])
    layout = reorder({A: 2, B: 1, C: 2, D: 1}, src, [(0, 8)])
    # a job may slide onto idle GPUs (ONES counts only GPUs taken from other jobs): the new
    # job first after B, C one to the left, the rest idle
    assert layout.tolist() == [A, A, B, D, C, C, IDLE, IDLE]
    assert _taken(layout, src) == 0


@pytest.mark.parametrize("seed", range(40))
def test_it_lays_out_as_the_recurrence_does(seed: int) -> None:
    rng = np.random.default_rng(seed)
    src = rng.choice([IDLE, A, B, C, D, 4], 12)
    alloc: dict[int, int] = {}
    for j in rng.permutation(6)[:5].tolist():
        size = int(rng.integers(1, 5))
        if sum(alloc.values()) + size <= src.size:
            alloc[j] = size
    assert reorder(alloc, src, [(0, src.size)]).tolist() == _plain(alloc, src.tolist())


@pytest.mark.parametrize("seed", range(10))
def test_a_block_never_spans_two_gpu_types(seed: int) -> None:
    rng = np.random.default_rng(seed)
    src = rng.choice([IDLE, A, B, C], 12)
    alloc = {A: int(rng.integers(1, 5)), B: int(rng.integers(1, 5)), D: int(rng.integers(1, 4))}
    layout = reorder(alloc, src, [(0, 4), (4, 12)])
    for j in alloc:
        held = np.flatnonzero(layout == j)
        assert held.size and held[-1] - held[0] + 1 == held.size  # one block
        assert held[-1] < 4 or held[0] >= 4  # on one type
