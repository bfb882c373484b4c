"""Job merging: the groups are the classes of identical rows (against a unique of the rows)."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations.allocation import JobGroups


def _partition(groups: JobGroups, jobs: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(jobs[groups.inverse == g].tolist()) for g in range(groups.size)}


def _expected(jobs: np.ndarray, rows: np.ndarray) -> set[frozenset[int]]:
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    return {frozenset(jobs[inverse == g].tolist()) for g in range(inverse.max() + 1)}


def _check(groups: JobGroups, jobs: np.ndarray, rows: np.ndarray) -> None:
    assert _partition(groups, jobs) == _expected(jobs, rows)
    # Each representative is a member of its group, and the counts are the group sizes.
    assert (
        groups.inverse[np.searchsorted(jobs, groups.representative)] == np.arange(groups.size)
    ).all()
    assert (groups.count == np.bincount(groups.inverse)).all()


@pytest.mark.parametrize("seed", range(20))
def test_groups_are_the_classes_of_identical_rows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    distinct = rng.choice([0.0, 0.5, 1.0, 2.5, 1e-300, 1e300], size=(rng.integers(1, 30), 4))
    rows = distinct[rng.integers(0, distinct.shape[0], rng.integers(1, 200))]
    jobs = np.sort(rng.choice(10_000, rows.shape[0], replace=False))
    _check(JobGroups.by_rows(jobs, rows), jobs, rows)
