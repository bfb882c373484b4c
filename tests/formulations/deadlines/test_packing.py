"""Round-up sizes and the consolidated placement routine (FORMULATIONS §6 proposition)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apportion.formulations.deadlines.packing import (
    PlacementError,
    fill,
    fit,
    place_consolidated,
    shrink,
)
from apportion.formulations.deadlines.problem import round_up, size_ladder


def test_round_up_on_eight_gpu_nodes() -> None:
    g = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 17, 20, 32])
    expected = [1, 2, 4, 4, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 32]
    assert round_up(g, 8).tolist() == expected


def test_round_up_on_a_node_size_that_is_not_a_power_of_two() -> None:
    # 6-GPU nodes: 1 | 2 | 6 is the divisible chain (4 does not divide 6), so 3 and 4 take a node.
    assert size_ladder(6).tolist() == [1, 2, 6]
    assert round_up(np.array([1, 2, 3, 4, 6, 7, 12]), 6).tolist() == [1, 2, 6, 6, 6, 12, 12]


def assert_consolidated(
    sizes: list[int], placements: list[dict[int, int]], nodes: int, g: int
) -> None:
    """Checked from the placements alone: each job whole on one node (≤ G) or on whole nodes."""
    used = np.zeros(nodes, dtype=int)
    for size, where in zip(sizes, placements, strict=True):
        assert sum(where.values()) == size, "a job got the wrong number of GPUs"
        if size <= g:
            assert len(where) == 1, f"a {size}-GPU job is split over {len(where)} nodes"
        else:
            assert len(where) == size // g and set(where.values()) == {g}, "not on whole nodes"
        for node, gpus in where.items():
            used[node] += gpus
    assert (used <= g).all(), "a node is over-subscribed"


@st.composite
def round_up_multisets(draw: st.DrawFn) -> tuple[list[int], int, int]:
    """Sizes from the ladder (1, 2, 4, … dividing G, then G) and nG whose sum fits `nodes`
    G-GPU nodes; G = 6 and 12 check the ladder of node sizes that are not powers of two."""
    g = draw(st.sampled_from([2, 4, 6, 8, 12, 16]))
    nodes = draw(st.integers(1, 12))
    choices = [*size_ladder(g).tolist(), *(g * n for n in range(2, nodes + 1))]
    sizes = draw(st.lists(st.sampled_from(choices), max_size=40))
    room, kept = nodes * g, []
    for size in sizes:  # keep a prefix-like subset that fits
        if size <= room:
            kept.append(size)
            room -= size
    return draw(st.permutations(kept)), nodes, g


@settings(max_examples=300, deadline=None)
@given(round_up_multisets())
def test_round_up_sizes_that_fit_are_always_placed_consolidated(
    case: tuple[list[int], int, int],
) -> None:
    sizes, nodes, g = case
    free = np.full(nodes, g, dtype=np.int64)
    placements = place_consolidated(np.array(sizes, dtype=np.int64), free, g)
    assert_consolidated(list(sizes), placements, nodes, g)
    assert free.sum() == nodes * g - sum(sizes)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 24), max_size=30), st.integers(1, 10))
def test_rounded_up_demands_that_fit_are_placed_consolidated(
    demands: list[int], nodes: int
) -> None:
    # Any demand, rounded up: 3→4, 5–7→8, 10→16 …; keep those whose reserved sizes fit.
    reserved = round_up(np.array(demands, dtype=np.int64), 8).tolist()
    room, kept = nodes * 8, []
    for size in reserved:
        if size <= room:
            kept.append(size)
            room -= size
    placements = place_consolidated(np.array(kept, dtype=np.int64), np.full(nodes, 8), 8)
    assert_consolidated(kept, placements, nodes, 8)


def test_without_round_up_sizes_that_fit_by_count_can_strand_gpus() -> None:
    # 4 + 3 + 3 + 3 + 3 = 16 GPUs fit two 8-GPU nodes by count, but FFD puts 4 + 3 on node 0 and
    # 3 + 3 on node 1, stranding 1 + 2 GPUs: the last 3-GPU job finds no node. Round-up (3 → 4)
    # is what rules this out.
    free = np.full(2, 8, dtype=np.int64)
    with pytest.raises(PlacementError):
        place_consolidated(np.array([4, 3, 3, 3, 3]), free, 8)


def test_shrink_keeps_the_demand_inside_its_block_and_returns_the_rest() -> None:
    free = np.zeros(3, dtype=np.int64)
    # A 10-GPU job reserved two whole nodes: it uses 8 + 2, six GPUs go back to node 1.
    assert shrink({0: 8, 1: 8}, 10, free) == {0: 8, 1: 2}
    assert free.tolist() == [0, 6, 0]


def test_fit_prefers_the_fullest_node_then_whole_nodes_and_splits_only_if_allowed() -> None:
    free = np.array([8, 3, 5], dtype=np.int64)
    assert fit(3, free, 8, allow_split=False) == {1: 3}  # best fit, not the empty node
    assert fit(10, free, 8, allow_split=False) == {0: 8, 2: 2}  # a whole node + the fullest fit
    assert free.tolist() == [0, 0, 3]
    assert fit(2, np.array([1, 1, 1]), 8, allow_split=False) is None
    assert fit(2, np.array([1, 1, 1]), 8, allow_split=True) == {0: 1, 1: 1}


def test_fill_skips_a_job_that_does_not_fit_and_serves_smaller_ones_behind_it() -> None:
    free = np.array([3], dtype=np.int64)
    demand = np.array([2, 4, 1])
    placed = fill(demand, np.array([1, 0, 2]), free, 8, allow_split=True)
    assert placed == {0: {0: 2}, 2: {0: 1}}
    assert free.tolist() == [0]
