"""A request's policy name and options, checked once when valid (solver/request.py): the same
answer as checking them again, and nothing remembered that a different request could reuse."""

from __future__ import annotations

from apportion.solver import InputError
from apportion.solver.request import REMEMBERED, _checked, checked_request


def test_a_valid_request_is_checked_once_and_answered_alike() -> None:
    first = checked_request("fifo", {"mode": "gavel"})
    again = checked_request("fifo", {"mode": "gavel"})
    assert again is first  # remembered, not checked again
    fresh = _checked("fifo", {"mode": "gavel"})
    assert not isinstance(first, InputError) and not isinstance(fresh, InputError)
    assert (first[0].name, first[1], first[2], first[3]) == (
        fresh[0].name,
        fresh[1],
        fresh[2],
        fresh[3],
    )
    assert first[2].mode == "gavel"  # type: ignore[attr-defined]


def test_options_equal_in_python_but_of_another_type_are_checked_apart() -> None:
    # 1 == True in Python: a valid time limit of 1 must not make `true` valid.
    assert not isinstance(checked_request("max_min_fairness", {"time_limit": 1}), InputError)
    refused = checked_request("max_min_fairness", {"time_limit": True})
    assert isinstance(refused, InputError)
    assert [e.loc for e in refused.errors] == [("options", "time_limit")]


def test_an_invalid_request_is_refused_every_time() -> None:
    for _ in range(2):
        refused = checked_request("fifo", {"mode": "nope"})
        assert isinstance(refused, InputError)
        assert refused.errors[0].loc == ("options", "mode")
    assert isinstance(checked_request("no-such-policy", {}), InputError)


def test_options_that_are_not_plain_values_are_checked_every_time() -> None:
    weights = {"options_list": [1, 2]}
    assert checked_request("fifo", weights) is not checked_request("fifo", weights)


def test_the_memory_stays_bounded_and_keeps_the_newest() -> None:
    from apportion.solver.request import _VALID

    for limit in range(1, REMEMBERED + 10):
        checked_request("max_min_fairness", {"time_limit": float(limit)})
    assert len(_VALID) <= REMEMBERED
    newest = checked_request("fifo", {"mode": "gavel"})
    assert checked_request("fifo", {"mode": "gavel"}) is newest
