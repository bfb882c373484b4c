"""Job merging: groups of identical rows, by hash with a check, against a plain unique of rows."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.formulations import allocation
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


def test_a_hash_collision_falls_back_to_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every row hashed alike: the check sees unequal rows in one group and groups by the rows.
    monkeypatch.setattr(
        allocation, "_row_hashes", lambda rows: np.zeros(rows.shape[0], dtype=np.uint64)
    )
    rows = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0], [5.0, 6.0], [3.0, 4.0]])
    jobs = np.arange(rows.shape[0])
    groups = JobGroups.by_rows(jobs, rows)
    assert groups.size == 3
    _check(groups, jobs, rows)


def test_negative_zero_is_zero() -> None:
    rows = np.array([[0.0, 1.0], [-0.0, 1.0], [0.0, 2.0]])
    jobs = np.arange(3)
    groups = JobGroups.by_rows(jobs, rows)
    assert groups.size == 2
    assert groups.inverse[0] == groups.inverse[1] != groups.inverse[2]
