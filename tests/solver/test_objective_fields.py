"""The optional snapshot fields the objective policies read: valid when absent, checked when set."""

from __future__ import annotations

import pytest

from apportion.solver import InputError, parse_snapshot


def _snapshot(**job: object) -> dict:
    return {
        "now": 10.0,
        "gpu_types": [{"name": "v100", "count": 1}],
        "jobs": [{"id": "a", "throughput": {"v100": 1.0}, **job}],
    }


def test_fields_are_optional_and_read_when_given() -> None:
    bare = parse_snapshot({"gpu_types": [{"name": "v100", "count": 1}], "jobs": [{"id": "a"}]})
    assert bare.now is None and bare.jobs[0].deadline is None
    snap = parse_snapshot(_snapshot(deadline=20.0, isolated_time_done=3.0))
    assert (snap.now, snap.jobs[0].deadline, snap.jobs[0].isolated_time_done) == (10.0, 20.0, 3.0)


@pytest.mark.parametrize(
    ("job", "field"),
    [
        ({"deadline": float("inf")}, "deadline"),
        ({"isolated_time_done": -1.0}, "isolated_time_done"),
        ({"deadline": "soon"}, "deadline"),
    ],
)
def test_bad_values_name_the_field(job: dict, field: str) -> None:
    with pytest.raises(InputError) as info:
        parse_snapshot(_snapshot(**job))
    assert info.value.errors[0].loc == ("snapshot", "jobs", 0, field)


def test_now_must_be_finite() -> None:
    with pytest.raises(InputError) as info:
        parse_snapshot({**_snapshot(), "now": float("nan")})
    assert info.value.errors[0].loc == ("snapshot", "now")
