"""The common options are strict (no string or boolean taken for a number) and `threads` is
bounded by the machine (solver/options.py)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from apportion.solver import InputError, solve
from apportion.solver.options import MAX_THREADS, SolveOptions
from tests.conformance.cases_max_min import TWO_BY_TWO


def rejected(**options: Any) -> dict[tuple[str | int, ...], str]:
    with pytest.raises(InputError) as caught:
        solve(TWO_BY_TWO, options=options)
    return {e.loc: e.msg for e in caught.value.errors}


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("time_limit", "inf"),
        ("time_limit", "5"),
        ("time_limit", True),
        ("time_limit", float("inf")),
        ("time_limit", float("nan")),
        ("time_limit", 0),
        ("time_limit", 1e-320),
        ("mip_gap", "0.01"),
        ("mip_gap", True),
        ("mip_gap", float("nan")),
        ("threads", True),
        ("threads", "2"),
        ("threads", 1.0),
        ("threads", 0),
        ("merge_identical", "false"),
        ("merge_identical", 0),
        ("verbose", "yes"),
    ],
)
def test_a_mistyped_option_is_named(key: str, bad: Any) -> None:
    assert list(rejected(**{key: bad})) == [("options", key)]


def test_threads_are_bounded_by_the_machine() -> None:
    assert (os.cpu_count() or 1) == MAX_THREADS
    message = rejected(threads=MAX_THREADS + 1)[("options", "threads")]
    assert str(MAX_THREADS) in message and "CPU" in message
    # The bound that once aborted the process inside HiGHS.
    assert ("options", "threads") in rejected(threads=100_000)
    result = solve(TWO_BY_TWO, options={"threads": MAX_THREADS, "backend": "highs"})
    assert result.status == "optimal"


def test_the_bound_is_documented_in_the_schema() -> None:
    field = SolveOptions.model_json_schema()["properties"]["threads"]
    assert "os.cpu_count()" in field["description"]
    assert field["maximum"] == MAX_THREADS


def test_integers_are_still_numbers_for_real_options() -> None:
    result = solve(TWO_BY_TWO, options={"time_limit": 5, "mip_gap": 0})
    assert result.status == "optimal"


@pytest.mark.parametrize(
    ("policy", "key", "bad"),
    [
        ("contention_placement", "w1", "0.7"),
        ("max_min_fairness", "heterogeneity_aware", "false"),
        ("max_min_fairness", "space_sharing", 1),
        ("deadline_admission", "horizon_slots", 12.0),
        ("deadline_admission", "overhead_seconds", "90"),
    ],
)
def test_a_policy_option_of_the_wrong_type_is_named_not_coerced(
    policy: str, key: str, bad: Any
) -> None:
    with pytest.raises(InputError) as caught:
        solve(TWO_BY_TWO, policy=policy, options={key: bad})
    assert ("options", key) in [e.loc for e in caught.value.errors]


def test_placement_shapes_still_come_as_json_gives_them() -> None:
    import json

    from apportion.refdata import FIXTURES

    snapshot = json.loads((FIXTURES / "deepshare_cluster.json").read_text())
    result = solve(
        snapshot, policy="contention_placement", options={"shapes": {"8": [[1, 8], [2, 4]]}}
    )
    assert result.status.has_solution
