"""The exact worst case of a share over a throughput box, against a brute force over its
vertices."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apportion.formulations.uncertainty import worst_shares


@settings(max_examples=40, derandomize=True, deadline=None)
@given(seed=st.integers(0, 10_000), types=st.integers(1, 4))
def test_worst_share_is_the_minimum_over_the_box_vertices(seed: int, types: int) -> None:
    rng = np.random.default_rng(seed)
    jobs = 3
    x = rng.uniform(0, 1, (jobs, types)) * (rng.uniform(size=(jobs, types)) < 0.7)
    t = rng.uniform(0.5, 5, (jobs, types))
    delta = rng.uniform(0, 0.9, (jobs, types))
    n = rng.integers(1, 8, types).astype(float)
    low, high = t * (1 - delta), t * (1 + delta)
    got = worst_shares(x, low, high, n)
    for j in range(jobs):
        # A ratio of linear functions over a box is smallest at one of its vertices.
        vertices = itertools.product(*zip(low[j], high[j], strict=True))
        best = min(float(np.dot(v, x[j]) / (np.dot(v, n) / n.sum())) for v in vertices)
        assert got[j] == pytest.approx(best, rel=1e-12, abs=1e-15)
