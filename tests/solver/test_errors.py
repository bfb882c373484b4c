"""Bad names are answered with the nearest good one ("did you mean"), and the choices of an
unknown policy are listed in whole names that fit in what the service echoes."""

from __future__ import annotations

from typing import Any

import pytest

from apportion.solver.errors import InputError
from apportion.solver.pipeline import solve
from apportion.solver.registry import NAMES, unknown_policy

SNAPSHOT: dict[str, Any] = {
    "gpu_types": [{"name": "v100", "count": 1}],
    "jobs": [{"id": "a", "throughput": {"v100": 1}}, {"id": "b", "throughput": {"v100": 1}}],
}


def _refusal(snapshot: dict[str, Any], **kwargs: Any) -> dict[str, str]:
    with pytest.raises(InputError) as caught:
        solve(snapshot, **kwargs)
    return {e.path: e.msg for e in caught.value.errors}


@pytest.mark.parametrize("given", ["max_min_fairnes", "water-filing", "fifo_prf", "x" * 5000])
def test_unknown_policy_lists_whole_names_and_how_many_more(given: str) -> None:
    message = _refusal(SNAPSHOT, policy=given)["policy"]
    assert len(message) <= 200  # the service echoes no more: nothing is cut after this
    listed = message.split("choose one of ", 1)[1].split(" … and ")[0].split(", ")
    assert listed == list(NAMES[: len(listed)])  # whole names, in order
    rest = len(NAMES) - len(listed)
    assert rest == 0 or f"… and {rest} more" in message


@pytest.mark.parametrize(
    ("given", "near"),
    [
        ("max_min_fairnes", "max_min_fairness"),
        ("water-filing", "water_filling"),
        ("fifo_prf", "fifo_perf"),
    ],
)
def test_a_misspelled_policy_is_answered_with_the_nearest(given: str, near: str) -> None:
    assert f"(did you mean {near!r}?)" in unknown_policy(given)


def test_a_name_near_nothing_gets_no_guess() -> None:
    assert "did you mean" not in unknown_policy("zzzz")


@pytest.mark.parametrize(
    ("options", "path", "near"),
    [
        ({"time_limt": 3}, "options.time_limt", "time_limit"),  # a common option
        ({"space_sharng": True}, "options.space_sharng", "space_sharing"),  # the policy's own
    ],
)
def test_a_misspelled_option_is_answered_with_the_nearest(
    options: dict[str, Any], path: str, near: str
) -> None:
    assert f"(did you mean {near!r}?)" in _refusal(SNAPSHOT, options=options)[path]


def test_misspelled_snapshot_fields_are_answered_with_the_nearest() -> None:
    job = {"id": "a", "throughput": {"v100": 1}, "wieght": 2}
    rows = {**SNAPSHOT, "gpu_typs": SNAPSHOT["gpu_types"], "jobs": [job]}
    errors = _refusal(rows)
    assert "(did you mean 'gpu_types'?)" in errors["snapshot.gpu_typs"]
    assert "(did you mean 'weight'?)" in errors["snapshot.jobs[0].wieght"]
    gpu = {**SNAPSHOT, "gpu_types": [{"name": "v100", "cuont": 1}]}
    assert "(did you mean 'count'?)" in _refusal(gpu)["snapshot.gpu_types[0].cuont"]


def test_a_misspelled_column_is_answered_once_with_the_nearest() -> None:
    columns = {"id": ["a"], "throughput": {"v100": [1.0]}, "wieght": [2.0]}
    message = _refusal({**SNAPSHOT, "jobs": columns})["snapshot.jobs.wieght"]
    assert message.count("(did you mean 'weight'?)") == 1


def test_a_policy_given_over_the_snapshots_own_is_said() -> None:
    own = {**SNAPSHOT, "policy": "max_total_throughput"}
    result = solve(own, policy="max_min_fairness")
    assert result.policy == "max_min_fairness"  # the request's policy still wins
    said = [w for w in result.warnings if "overrides" in w]
    assert len(said) == 1 and "'max_min_fairness'" in said[0]
    assert "'max_total_throughput'" in said[0]


@pytest.mark.parametrize("given", [None, "max_throughput", "max_total_throughput"])
def test_no_override_is_said_when_the_policies_agree(given: str | None) -> None:
    result = solve({**SNAPSHOT, "policy": "max_total_throughput"}, policy=given)
    assert not [w for w in result.warnings if "overrides" in w]
