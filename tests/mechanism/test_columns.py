"""A result's columns (`JobTable`) enter the mechanism as they are: the same round as the
allocation written out job by job, jobs the round does not list left out, bad columns named."""

from __future__ import annotations

import numpy as np
import pytest

from apportion.mechanism import Planner, next_round
from apportion.solver.errors import InputError
from apportion.solver.result.table import JobTable
from tests.mechanism.rounds_checks import ROUND, assert_valid_round, cluster

SNAPSHOT = cluster(
    {"v1": ("v100", 4), "v2": ("v100", 4), "k1": ("k80", 4)},
    [("a", 1), ("b", 2), ("c", 4), ("d", 1)],
)


def _table(ids: list[str], names: list[str], x: list[list[float]]) -> JobTable:
    allocation = np.array(x, dtype=float)
    return JobTable(ids, names, allocation, np.zeros_like(allocation))


def test_columns_give_the_same_round_as_the_allocation_job_by_job() -> None:
    # Columns in another job and type order than the snapshot's, one job the round does not
    # list, one fraction below round-off: the round reads X by id and name.
    table = _table(
        ["d", "zz", "c", "b", "a"],
        ["v100", "k80"],
        [[0.5, 0.5], [1.0, 0.0], [0.0, 1.0], [0.6, 1e-12], [0.3, 0.7]],
    )
    written = {"a": {"v100": 0.3, "k80": 0.7}, "b": {"v100": 0.6}, "c": {"k80": 1.0}}
    written["d"] = {"v100": 0.5, "k80": 0.5}
    received = {"a": {"v100": 100.0}, "b": {"v100": 50.0}, "d": {"k80": 10.0}}
    by_columns = next_round(SNAPSHOT, table, received, round_seconds=ROUND)
    by_jobs = next_round(SNAPSHOT, written, received, round_seconds=ROUND)
    assert by_columns == by_jobs
    assert_valid_round(by_columns, SNAPSHOT, written)
    # Round after round, the planner built from the columns agrees too.
    planner = Planner(SNAPSHOT, table, round_seconds=ROUND)
    assert planner.next_round(received) == by_jobs


def test_bad_columns_are_named_from_the_request_root() -> None:
    table = _table(["a", "b"], ["v100", "a100"], [[1.5, 0.0], [0.2, 0.1]])
    with pytest.raises(InputError) as caught:
        next_round(SNAPSHOT, table, {})
    locs = {e.loc: e.msg for e in caught.value.errors}
    assert locs == {
        ("allocation", "a100"): "unknown GPU type 'a100'",
        ("allocation", "a", "v100"): "a time fraction is between 0 and 1",
    }


def test_a_job_given_more_than_all_its_time_is_refused() -> None:
    table = _table(["a"], ["v100", "k80"], [[0.7, 0.6]])
    with pytest.raises(InputError) as caught:
        next_round(SNAPSHOT, table, {})
    assert [e.loc for e in caught.value.errors] == [("allocation", "a")]
