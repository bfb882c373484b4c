"""Grouping a family's pieces into jobs: on distinct nodes, worst pieces together."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.placement.pooled.grouping import forced_first as _forced_first
from apportion.formulations.placement.pooled.grouping import group_pieces as _group_pieces


def test_pieces_in_order_when_that_keeps_nodes_distinct() -> None:
    jobs = _group_pieces(
        np.array([0, 1, 2, 3]), np.array([1, 1, 1, 1]), np.array([4.0, 3.0, 2.0, 1.0]), 2, 2
    )
    assert jobs == [[0, 1], [2, 3]]  # worst with worst: 4 + 2, not 4 + 3


def test_a_node_in_every_job_is_shared_out() -> None:
    jobs = _group_pieces(np.array([0, 1, 2]), np.array([1, 1, 2]), np.array([3.0, 2.0, 1.0]), 2, 2)
    assert sorted(sorted(job) for job in jobs) == [[0, 2], [1, 2]]


def test_a_node_in_every_remaining_job_joins_the_next_one() -> None:
    # From a trace snapshot: four 4-node jobs; node 15 holds three pieces, four nodes two. Worst
    # first runs into node 20 twice in the second job; the grouping must still put the four
    # contended pieces (30, 7, 10, 13) together: 0.109 + 0.006 + 0.005 above 1.
    nodes = np.array([7, 8, 10, 13, 14, 15, 16, 19, 20, 30])
    count = np.array([1, 2, 1, 1, 2, 3, 1, 2, 2, 1])
    worst = np.array([1.063, 1.0, 1.063, 1.063, 1.0, 1.0, 1.006, 1.0, 1.005, 1.109])
    value = dict(zip(nodes.tolist(), worst.tolist(), strict=True))
    for grouping in (
        _forced_first(nodes, count, worst, 4, 4),
        _group_pieces(nodes, count, worst, 4, 4),
    ):
        assert sum(max(value[n] for n in job) - 1.0 for job in grouping) == pytest.approx(0.12)
        assert all(len(set(job)) == 4 for job in grouping)


@pytest.mark.parametrize("seed", range(30))
def test_forced_first_always_groups_on_distinct_nodes(seed: int) -> None:
    rng = np.random.default_rng(seed)
    jobs, k = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    # A random multiset of k·jobs pieces with every node used at most `jobs` times.
    pieces = np.concatenate([np.full(jobs, n) for n in range(k + 4)])
    chosen = rng.choice(pieces, size=k * jobs, replace=False)
    nodes, count = np.unique(chosen, return_counts=True)
    grouping = _forced_first(nodes, count, rng.random(nodes.size), jobs, k)
    assert all(len(set(job)) == k for job in grouping)
    used = np.unique(np.concatenate(grouping), return_counts=True)
    assert used[0].tolist() == nodes.tolist() and used[1].tolist() == count.tolist()
