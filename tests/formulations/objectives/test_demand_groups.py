"""Splitting a group's aggregate time back into its members
(formulations.objectives.demand_groups)."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.objectives.demand_groups import (
    inconsistent_groups,
    interval_ids,
    job_classes,
    refine,
    split_groups,
)


def _member(rng: np.random.Generator, speed: np.ndarray, demand: float) -> np.ndarray:
    """A random point of P(d) = {x ≥ 0 : Σx ≤ 1, T·x ≥ d}, with full-time rows now and then."""
    for _ in range(200):
        x = rng.dirichlet(np.ones(speed.size)) * (speed > 0)
        x *= 1.0 if rng.random() < 0.5 else rng.uniform(0.3, 1.0) / max(x.sum(), 1e-12)
        if speed @ x >= demand:
            return x
    x = np.zeros(speed.size)
    x[np.argmax(speed)] = 1.0
    return x


@pytest.mark.parametrize("seed", range(20))
def test_any_sum_of_members_splits_back_exactly(seed: int) -> None:
    # Members' demands share one interval of {0, T_(1), …}: then every aggregate of points of
    # their P(d_j) splits into points meeting each demand exactly and summing to at most it.
    rng = np.random.default_rng(seed)
    types = int(rng.integers(1, 5))
    totals, speeds, demands, groups = [], [], [], []
    for g in range(int(rng.integers(1, 12))):
        speed = rng.uniform(0.5, 5, types) * (rng.random(types) > 0.2)
        speed[np.argmax(speed)] = max(speed.max(), 1.0)
        ends = np.concatenate([[0.0], np.sort(speed[speed > 0])])
        i = int(rng.integers(0, ends.size - 1))
        demand = rng.uniform(ends[i], ends[i + 1], int(rng.integers(1, 7)))
        if rng.random() < 0.2:
            demand[:] = ends[i + 1]  # all on an interval end
        totals.append(np.sum([_member(rng, speed, d) for d in demand], axis=0))
        speeds.append(speed)
        demands.append(demand)
        groups.append(np.full(demand.size, g))
    total, speed, demand, group = (
        np.array(totals),
        np.array(speeds),
        np.concatenate(demands),
        np.concatenate(groups),
    )
    x = split_groups(total, speed, demand, group)
    assert (x >= -1e-12).all()
    assert (x.sum(axis=1) <= 1 + 1e-12).all()
    assert (x * speed[group]).sum(axis=1) == pytest.approx(demand, rel=1e-9, abs=1e-12)
    assert (x[:, :] * (speed[group] == 0)).max() == 0.0
    for g in range(total.shape[0]):
        assert (x[group == g].sum(axis=0) <= total[g] + 1e-9).all()


def test_straddling_demands_are_detected_and_split_off() -> None:
    # T = (1, 2): intervals d ≤ 0, (0, 1], (1, 2]. Demands 0.5 and 1.9 straddle 1: the aggregate
    # rows are only a relaxation for them (y = (1.6, 0.4) meets Σy ≤ 2, T·y ≥ 2.4, yet the 1.9 job
    # needs ≥ 0.9 of the fast type), so the group must be split; 1.5 and 1.9 may stay together.
    speed = np.array([[1.0, 2.0]] * 3)
    demand = np.array([0.5, 1.9, 1.5])
    low, high = interval_ids(speed, demand)
    assert low.tolist() == [1, 2, 2]
    group = np.zeros(3, dtype=np.int64)
    assert inconsistent_groups(group, low, high, 1).tolist() == [True]
    refined = refine(group, low)
    assert refined[1] == refined[2] != refined[0]
    # A demand exactly on an end may join either neighbour.
    low, high = interval_ids(speed[:1], np.array([1.0]))
    assert (low[0], high[0]) == (1, 2)


def test_classes_merge_identical_rows_only_when_asked() -> None:
    speed = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 3.0]])
    scale = np.array([1.0, 1.0, 1.0])
    assert job_classes(speed, scale, merge=True).tolist()[:2] == [0, 0]
    assert len(set(job_classes(speed, scale, merge=True).tolist())) == 2
    assert job_classes(speed, scale, merge=False).tolist() == [0, 1, 2]
